import CKnot

/// Writes responses to a `DNSQueryMessage` with libknot (`knot_pkt_put_question`,
/// `knot_pkt_put`): same ID and question, QR and RA set, RD and CD copied. A query with an OPT
/// record gets one back (RFC 6891), carrying its Client Subnet option with the scope the answer
/// is valid for (RFC 7871 §7.2.1).
public enum DNSResponseWriter {
    /// The records of the answer section: one RRset owned by the question name.
    public struct Answer: Sendable {
        public var type: UInt16
        public var ttl: UInt32
        private var data: RecordData

        private enum RecordData: Sendable {
            case list([[UInt8]])
            /// Up to three IPv4 addresses as numbers, without an array (the cache's usual form).
            case ipv4(UInt32, UInt32, UInt32, count: Int)
        }

        /// `records`: each record's RDATA (4 bytes for A, 16 for AAAA).
        public init(type: UInt16, ttl: UInt32, records: [[UInt8]]) {
            self.type = type
            self.ttl = ttl
            data = .list(records)
        }

        /// A records (type 1) of the first `count` (at most 3) of three IPv4 addresses, each a
        /// number whose most significant byte is the address's first.
        public init(ttl: UInt32, ipv4 first: UInt32, _ second: UInt32, _ third: UInt32, count: Int) {
            precondition((0...3).contains(count), "DNSResponseWriter.Answer: at most 3 inline addresses")
            type = UInt16(KNOT_RRTYPE_A.rawValue)
            self.ttl = ttl
            data = .ipv4(first, second, third, count: count)
        }

        /// Each record's RDATA.
        public var records: [[UInt8]] {
            var records: [[UInt8]] = []
            forEachRecord { records.append(Array($0)) }
            return records
        }

        var isEmpty: Bool {
            switch data {
            case .list(let records): records.isEmpty
            case .ipv4(_, _, _, let count): count == 0
            }
        }

        /// The bytes the records take in a message, owners compressed to a pointer.
        var wireSize: Int {
            switch data {
            case .list(let records): records.reduce(0) { $0 + 2 + 10 + $1.count }
            case .ipv4(_, _, _, let count): count * (2 + 10 + 4)
            }
        }

        /// Gives `body` each record's RDATA in turn.
        func forEachRecord<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
            switch data {
            case .list(let records):
                for record in records {
                    try record.withUnsafeBytes { data in Result { () throws(E) in try body(data) } }.get()
                }
            case .ipv4(let first, let second, let third, let count):
                for index in 0..<count {
                    let address = index == 0 ? first : index == 1 ? second : third
                    try withUnsafeBytes(of: address.bigEndian) { (data) throws(E) in try body(data) }
                }
            }
        }
    }

    /// The authority section of a negative answer (RFC 2308 §3): the zone's SOA, with the TTL it
    /// is sent with (the answer's remaining negative TTL, RFC 2308 §5).
    /// The SOA's names are turned into wire form once, here, for both the bound and the write.
    public struct Authority: Sendable {
        public let ttl: UInt32
        /// The zone's name and the SOA's RDATA in wire form.
        let owner: [UInt8], rdata: [UInt8]

        /// `.malformed` when the SOA's names are not ones libknot reads.
        public init(soa: DNSSOARecord, ttl: UInt32) throws(DNSMessageError) {
            (owner, rdata) = try soa.wire()
            self.ttl = ttl
        }

        /// The bytes the record takes in a message, its owner uncompressed.
        var wireSize: Int { owner.count + 10 + rdata.count }
    }

    /// RCODEs the service writes.
    public static let noError: UInt8 = 0, serverFailure: UInt8 = 2, nameError: UInt8 = 3, refused: UInt8 = 5

    /// UDP payload size the response's OPT record advertises.
    static let payloadSize: UInt16 = 1232

    /// The response to `query` with `rcode` and `answer` (nil or no records: an empty answer
    /// section), and `authority` in the authority section. `subnetScope`: the scope prefix
    /// length of the echoed Client Subnet option. `.malformed` when the SOA's names are not ones
    /// libknot reads.
    public static func response(
        to query: some DNSQuery, rcode: UInt8, answer: Answer?, authority: Authority? = nil, subnetScope: UInt8 = 0
    ) throws(DNSMessageError) -> [UInt8] {
        var failure: DNSMessageError?
        let bytes = [UInt8](unsafeUninitializedCapacity: bound(for: query, answer: answer, authority: authority)) { buffer, count in
            do throws(DNSMessageError) {
                count = try write(
                    to: query, rcode: rcode, answer: answer, authority: authority, subnetScope: subnetScope,
                    into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// The most bytes `write` writes for `query`, `answer` and `authority`.
    public static func bound(for query: some DNSQuery, answer: Answer?, authority: Authority? = nil) -> Int {
        messageBound(for: query, answer: answer, authority: authority)
    }

    private static func messageBound(for query: some DNSQuery, answer: Answer?, authority: Authority?) -> Int {
        let recordBytes = (answer?.wireSize ?? 0) + (authority?.wireSize ?? 0)
        // The OPT record with a Client Subnet option for IPv6 takes 35 bytes.
        return min(
            Int(KNOT_WIRE_MAX_PKTSIZE.rawValue),
            Int(KNOT_WIRE_HEADER_SIZE.rawValue) + query.withQuestionName { $0.count } + 4 + recordBytes + 64)
    }

    /// Writes the response of `response(to:rcode:answer:authority:subnetScope:)` into `buffer`
    /// (at least `bound(for:answer:authority:)` bytes, its former content never read) and
    /// returns its size.
    public static func write(
        to query: some DNSQuery, rcode: UInt8, answer: Answer?, authority: Authority? = nil, subnetScope: UInt8 = 0,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(DNSMessageError) -> Int {
        try writeMessage(to: query, rcode: rcode, answer: answer, authority: authority, subnetScope: subnetScope, into: buffer)
    }

    private static func writeMessage(
        to query: some DNSQuery, rcode: UInt8, answer: Answer?, authority: Authority?, subnetScope: UInt8,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(DNSMessageError) -> Int {
        try KnotArena.with { (memory) throws(DNSMessageError) in
            let packet = try KnotPacket(writingInto: buffer, memory: memory)
            return try write(to: query, rcode: rcode, answer: answer, authority: authority, subnetScope: subnetScope, into: packet)
        }
    }

    private static func write(
        to query: some DNSQuery, rcode: UInt8, answer: Answer?, authority: Authority?, subnetScope: UInt8,
        into packet: borrowing KnotPacket
    ) throws(DNSMessageError) -> Int {
        let wire = packet.wire
        knot_wire_set_id(wire, query.id)
        knot_wire_set_qr(wire)
        knot_wire_set_ra(wire)
        if query.recursionDesired { knot_wire_set_rd(wire) }
        if query.checkingDisabled { knot_wire_set_cd(wire) }
        knot_wire_set_rcode(wire, Int16(rcode))
        try query.withQuestionName { (name) throws(DNSMessageError) in
            try Knot.check(
                knot_pkt_put_question(packet.pointer, name.baseAddress, query.questionClass, query.type), "knot_pkt_put_question")
        }
        try Knot.check(knot_pkt_begin(packet.pointer, KNOT_ANSWER), "knot_pkt_begin")
        if let answer, !answer.isEmpty {
            // The owner is the question name in the packet's wire, written as a pointer to it.
            try put(answer, owner: packet.wire + Int(KNOT_WIRE_HEADER_SIZE.rawValue), compression: KNOT_COMPR_HINT_QNAME, into: packet)
        }
        if let authority {
            try Knot.check(knot_pkt_begin(packet.pointer, KNOT_AUTHORITY), "knot_pkt_begin")
            let record = Answer(type: UInt16(KNOT_RRTYPE_SOA.rawValue), ttl: authority.ttl, records: [authority.rdata])
            // The zone's name is not the question's: no hint, libknot compresses what it can.
            try authority.owner.withUnsafeBufferPointer { (owner) throws(DNSMessageError) in
                try put(record, owner: UnsafeMutablePointer(mutating: owner.baseAddress!), compression: KNOT_COMPR_HINT_NONE, into: packet)
            }
        }
        if let edns = query.edns {
            try Knot.check(knot_pkt_begin(packet.pointer, KNOT_ADDITIONAL), "knot_pkt_begin")
            try putOPT(subnet: edns.clientSubnet, scope: subnetScope, into: packet)
        }
        return packet.size
    }

    /// `bound(for:answer:authority:)` for a borrowed query, specialised here (a generic call
    /// from another module is not).
    public static func bound(for query: BorrowedDNSQuery, answer: Answer?, authority: Authority? = nil) -> Int {
        messageBound(for: query, answer: answer, authority: authority)
    }

    /// `write(to:rcode:answer:authority:subnetScope:into:)` for a borrowed query, specialised
    /// here (the fast path's call).
    public static func write(
        to query: BorrowedDNSQuery, rcode: UInt8, answer: Answer?, authority: Authority? = nil, subnetScope: UInt8 = 0,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(DNSMessageError) -> Int {
        try writeMessage(to: query, rcode: rcode, answer: answer, authority: authority, subnetScope: subnetScope, into: buffer)
    }

    /// Puts one RRset (`knot_rrset_add_rdata`, `knot_pkt_put`) owned by `owner`, which must stay
    /// valid while this runs. `compression`: `KNOT_COMPR_HINT_QNAME` when the owner is the
    /// question name in the packet's wire (written as a pointer to it without looking), else
    /// `KNOT_COMPR_HINT_NONE` (libknot finds what it can compress).
    private static func put(
        _ answer: Answer, owner: UnsafeMutablePointer<UInt8>, compression: knot_compr_hint, into packet: borrowing KnotPacket
    ) throws(DNSMessageError) {
        var rrset = knot_rrset_t()
        // The owner is borrowed; only the records are the RRset's own (freed below).
        knot_rrset_init(&rrset, owner, answer.type, UInt16(KNOT_CLASS_IN.rawValue), answer.ttl)
        // The records from the packet's memory context.
        var memory = packet.pointer.pointee.mm
        // The packet keeps a shallow copy of the RRset and reads it only while `knot_pkt_put` runs.
        defer { knot_rdataset_clear(&rrset.rrs, &memory) }
        try answer.forEachRecord { (data) throws(DNSMessageError) in
            try Knot.check(
                knot_rrset_add_rdata(&rrset, data.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt16(data.count), &memory),
                "knot_rrset_add_rdata")
        }
        try Knot.check(knot_pkt_put_rotate(packet.pointer, UInt16(compression.rawValue), &rrset, 0, 0), "knot_pkt_put")
    }

    /// Puts the OPT record (`knot_edns_init`), with the Client Subnet option when the query had
    /// one. Its owner and RDATA come from the packet's memory context, as the records of `put`
    /// do (the per-thread `KnotArena` for the messages written here), and the option's data is
    /// written on the stack: no `malloc` for an EDNS query's answer.
    static func putOPT(subnet: DNSQueryMessage.ClientSubnet?, scope: UInt8, into packet: borrowing KnotPacket) throws(DNSMessageError) {
        var memory = packet.pointer.pointee.mm
        var opt = knot_rrset_t()
        try Knot.check(knot_edns_init(&opt, payloadSize, 0, 0, &memory), "knot_edns_init")
        // The packet keeps a shallow copy of the RRset and reads it only while `knot_pkt_put` runs.
        defer { knot_rrset_clear(&opt, &memory) }
        if let subnet {
            var ecs = knot_edns_client_subnet_t()
            ecs.family = subnet.family
            ecs.source_len = subnet.sourcePrefixLength
            ecs.scope_len = scope
            withUnsafeMutableBytes(of: &ecs.address) { target in
                subnet.withAddress { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(target.count))) }
            }
            let size = knot_edns_client_subnet_size(&ecs)
            // The option's data: family, two prefix lengths and at most an IPv6 address (20 bytes).
            var data: (UInt64, UInt64, UInt64) = (0, 0, 0)
            guard Int(size) <= MemoryLayout.size(ofValue: data) else {
                throw DNSMessageError(.library, "a Client Subnet option of \(size) bytes")
            }
            let written = withUnsafeMutableBytes(of: &data) {
                knot_edns_client_subnet_write($0.baseAddress?.assumingMemoryBound(to: UInt8.self), size, &ecs)
            }
            try Knot.check(written, "knot_edns_client_subnet_write")
            let added = withUnsafeBytes(of: &data) {
                knot_edns_add_option(
                    &opt, UInt16(KNOT_EDNS_OPTION_CLIENT_SUBNET), size, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), &memory)
            }
            try Knot.check(added, "knot_edns_add_option")
        }
        try Knot.check(knot_pkt_put_rotate(packet.pointer, UInt16(KNOT_COMPR_HINT_NONE.rawValue), &opt, 0, 0), "knot_pkt_put")
    }
}

extension DNSResponseWriter {
    /// An upstream's reply passed on to the client that asked `query`: the same bytes with the
    /// query's ID (`knot_wire_set_id`; the upstream was asked with its own). `reply` must be at
    /// least a header (`DNSReplySummary.parse` checked it).
    public static func forwarded(_ reply: [UInt8], to query: some DNSQuery) -> [UInt8] {
        DNSHeader.settingID(query.id, of: reply)
    }
}

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
        /// Each record's RDATA (4 bytes for A, 16 for AAAA).
        public var records: [[UInt8]]

        public init(type: UInt16, ttl: UInt32, records: [[UInt8]]) {
            self.type = type
            self.ttl = ttl
            self.records = records
        }
    }

    /// The authority section of a negative answer (RFC 2308 §3): the zone's SOA, with the TTL it
    /// is sent with (the answer's remaining negative TTL, RFC 2308 §5).
    public struct Authority: Sendable {
        public var soa: DNSSOARecord
        public var ttl: UInt32

        public init(soa: DNSSOARecord, ttl: UInt32) {
            self.soa = soa
            self.ttl = ttl
        }
    }

    /// RCODEs the service writes.
    public static let noError: UInt8 = 0, serverFailure: UInt8 = 2, nameError: UInt8 = 3

    /// UDP payload size the response's OPT record advertises.
    static let payloadSize: UInt16 = 1232

    /// The response to `query` with `rcode` and `answer` (nil or no records: an empty answer
    /// section), and `authority` in the authority section. `subnetScope`: the scope prefix
    /// length of the echoed Client Subnet option. `.malformed` when the SOA's names are not ones
    /// libknot reads.
    public static func response(
        to query: DNSQueryMessage, rcode: UInt8, answer: Answer?, authority: Authority? = nil, subnetScope: UInt8 = 0
    ) throws(DNSMessageError) -> [UInt8] {
        let records = answer?.records ?? []
        let soa = try authority?.soa.wire()
        let recordBytes = records.reduce(0) { $0 + 2 + 10 + $1.count } + (soa.map { $0.owner.count + 10 + $0.rdata.count } ?? 0)
        let capacity = min(
            Int(KNOT_WIRE_MAX_PKTSIZE.rawValue),
            Int(KNOT_WIRE_HEADER_SIZE.rawValue) + query.questionName.count + 4 + recordBytes + 64)
        let packet = try KnotPacket(capacity: capacity)
        let wire = packet.wire
        knot_wire_set_id(wire, query.id)
        knot_wire_set_qr(wire)
        knot_wire_set_ra(wire)
        if query.recursionDesired { knot_wire_set_rd(wire) }
        if query.checkingDisabled { knot_wire_set_cd(wire) }
        knot_wire_set_rcode(wire, Int16(rcode))
        try query.questionName.withUnsafeBufferPointer { (name) throws(DNSMessageError) in
            try Knot.check(knot_pkt_put_question(packet.pointer, name.baseAddress, query.questionClass, query.type), "knot_pkt_put_question")
        }
        try Knot.check(knot_pkt_begin(packet.pointer, KNOT_ANSWER), "knot_pkt_begin")
        if let answer, !records.isEmpty {
            try put(answer, owner: query.questionName, compression: KNOT_COMPR_HINT_QNAME, into: packet)
        }
        if let authority, let soa {
            try Knot.check(knot_pkt_begin(packet.pointer, KNOT_AUTHORITY), "knot_pkt_begin")
            let record = Answer(type: UInt16(KNOT_RRTYPE_SOA.rawValue), ttl: authority.ttl, records: [soa.rdata])
            try put(record, owner: soa.owner, compression: KNOT_COMPR_HINT_NONE, into: packet)
        }
        if let edns = query.edns {
            try Knot.check(knot_pkt_begin(packet.pointer, KNOT_ADDITIONAL), "knot_pkt_begin")
            try putOPT(subnet: edns.clientSubnet, scope: subnetScope, into: packet)
        }
        return packet.bytes
    }

    /// Puts one RRset (`knot_rrset_add_rdata`, `knot_pkt_put`). `compression`: the owner's hint,
    /// `KNOT_COMPR_HINT_QNAME` when the owner is the question name (a pointer to it is written
    /// without looking), else `KNOT_COMPR_HINT_NONE` (libknot finds what it can compress).
    private static func put(
        _ answer: Answer, owner: [UInt8], compression: knot_compr_hint, into packet: KnotPacket
    ) throws(DNSMessageError) {
        var rrset = knot_rrset_t()
        let ownerCopy = try owner.withUnsafeBufferPointer { (name) throws(DNSMessageError) in
            try Knot.require(knot_dname_copy(name.baseAddress, nil), "knot_dname_copy")
        }
        knot_rrset_init(&rrset, ownerCopy, answer.type, UInt16(KNOT_CLASS_IN.rawValue), answer.ttl)
        // The packet keeps a shallow copy of the RRset and reads it only while `knot_pkt_put` runs.
        defer { knot_rrset_clear(&rrset, nil) }
        for record in answer.records {
            try record.withUnsafeBufferPointer { (data) throws(DNSMessageError) in
                try Knot.check(knot_rrset_add_rdata(&rrset, data.baseAddress, UInt16(data.count), nil), "knot_rrset_add_rdata")
            }
        }
        try Knot.check(knot_pkt_put_rotate(packet.pointer, UInt16(compression.rawValue), &rrset, 0, 0), "knot_pkt_put")
    }

    /// Puts the OPT record (`knot_edns_init`), with the Client Subnet option when the query had one.
    static func putOPT(subnet: DNSQueryMessage.ClientSubnet?, scope: UInt8, into packet: KnotPacket) throws(DNSMessageError) {
        var opt = knot_rrset_t()
        try Knot.check(knot_edns_init(&opt, payloadSize, 0, 0, nil), "knot_edns_init")
        defer { knot_rrset_clear(&opt, nil) }
        if let subnet {
            var ecs = knot_edns_client_subnet_t()
            ecs.family = subnet.family
            ecs.source_len = subnet.sourcePrefixLength
            ecs.scope_len = scope
            withUnsafeMutableBytes(of: &ecs.address) { target in
                for (index, byte) in subnet.address.prefix(target.count).enumerated() { target[index] = byte }
            }
            let size = knot_edns_client_subnet_size(&ecs)
            var data = [UInt8](repeating: 0, count: Int(size))
            try data.withUnsafeMutableBufferPointer { (buffer) throws(DNSMessageError) in
                try Knot.check(knot_edns_client_subnet_write(buffer.baseAddress, size, &ecs), "knot_edns_client_subnet_write")
                try Knot.check(
                    knot_edns_add_option(&opt, UInt16(KNOT_EDNS_OPTION_CLIENT_SUBNET), size, buffer.baseAddress, nil),
                    "knot_edns_add_option")
            }
        }
        try Knot.check(knot_pkt_put_rotate(packet.pointer, UInt16(KNOT_COMPR_HINT_NONE.rawValue), &opt, 0, 0), "knot_pkt_put")
    }
}

extension DNSResponseWriter {
    /// An upstream's reply passed on to the client that asked `query`: the same bytes with the
    /// query's ID (`knot_wire_set_id`; the upstream was asked with its own). `reply` must be at
    /// least a header (`DNSReplySummary.parse` checked it).
    public static func forwarded(_ reply: [UInt8], to query: DNSQueryMessage) -> [UInt8] {
        DNSHeader.settingID(query.id, of: reply)
    }
}

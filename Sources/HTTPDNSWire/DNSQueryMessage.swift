import CKnot

/// A DNS query as a client sent it (RFC 1035 §4.1), read by libknot (`knot_pkt_parse`): a
/// standard query (QR 0, opcode QUERY) with exactly one question.
public struct DNSQueryMessage: DNSQuery, Sendable {
    /// The message as received, for forwarding.
    public let bytes: [UInt8]
    public let id: UInt16
    public let recursionDesired: Bool
    public let checkingDisabled: Bool
    /// The question name in wire form as sent (case kept), for the response's question.
    public let questionName: [UInt8]
    /// The question name in presentation form, lower-case, without the final dot (`""` for the
    /// root); bytes outside letters, digits and `-`/`_` appear as libknot escapes them (`\DDD`).
    public let name: String
    public let type: UInt16
    public let questionClass: UInt16
    /// The query's OPT record (RFC 6891), if any.
    public let edns: EDNS?

    /// What the query's OPT record says.
    public struct EDNS: Sendable, Equatable {
        public var payloadSize: UInt16
        public var dnssecOK: Bool
        public var clientSubnet: ClientSubnet?
    }

    /// An EDNS Client Subnet option (RFC 7871). The address is kept inline, not in an array: a
    /// query's option is read on every RFC 8484 hit that carries one.
    public struct ClientSubnet: Sendable, Equatable {
        /// 1 IPv4, 2 IPv6 (address family numbers).
        public var family: UInt16
        public var sourcePrefixLength: UInt8
        public var scopePrefixLength: UInt8
        /// The address bytes (at most 16), zero after them.
        private var storage: (UInt64, UInt64) = (0, 0)
        private var addressCount = 0

        /// `address`: at most 16 bytes.
        public init(family: UInt16, sourcePrefixLength: UInt8, scopePrefixLength: UInt8, address: [UInt8]) {
            self.family = family
            self.sourcePrefixLength = sourcePrefixLength
            self.scopePrefixLength = scopePrefixLength
            self.address = address
        }

        /// The same from the address's bytes where they lie (copied; at most 16).
        init(family: UInt16, sourcePrefixLength: UInt8, scopePrefixLength: UInt8, rawAddress: UnsafeRawBufferPointer) {
            self.family = family
            self.sourcePrefixLength = sourcePrefixLength
            self.scopePrefixLength = scopePrefixLength
            store(rawAddress)
        }

        /// The address, zero-padded to 4 or 16 bytes: a new array (`withAddress` reads it in place).
        public var address: [UInt8] {
            get { withAddress { Array($0) } }
            set { newValue.withUnsafeBytes { store($0) } }
        }

        /// Calls `body` with the address's bytes.
        public func withAddress<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(addressCount))) }
        }

        private mutating func store(_ bytes: UnsafeRawBufferPointer) {
            precondition(bytes.count <= 16, "ClientSubnet: an address of \(bytes.count) bytes")
            var storage: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            self.storage = storage
            addressCount = bytes.count
        }

        public static func == (lhs: ClientSubnet, rhs: ClientSubnet) -> Bool {
            lhs.family == rhs.family && lhs.sourcePrefixLength == rhs.sourcePrefixLength
                && lhs.scopePrefixLength == rhs.scopePrefixLength && lhs.addressCount == rhs.addressCount
                && lhs.storage.0 == rhs.storage.0 && lhs.storage.1 == rhs.storage.1
        }
    }

    /// Reads a query. `.malformed` when libknot cannot parse it (also a bad Client Subnet
    /// option); `.unexpected` when it is a reply, another opcode, or has no or several questions.
    public static func parse(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSQueryMessage {
        // Parsed in a copy: libknot may change the wire it parses, and `bytes` is forwarded as sent.
        var wire = bytes
        let result = wire.withUnsafeMutableBytes { wire in
            Result { () throws(DNSMessageError) in
                try withQuery(parsing: wire) { (query) throws(DNSMessageError) in try DNSQueryMessage(query, bytes: bytes) }
            }
        }
        return try result.get()
    }

    /// Reads the query in `message` where it lies (libknot may change those bytes) and gives it
    /// to `body`, borrowed: the query and its pointers are valid inside `body` only. The same
    /// reader as `parse`, and the same errors, without a copy of the message or its name.
    public static func withQuery<R>(
        parsing message: UnsafeMutableRawBufferPointer, _ body: (BorrowedDNSQuery) throws(DNSMessageError) -> R
    ) throws(DNSMessageError) -> R {
        try KnotArena.with { (memory) throws(DNSMessageError) in
            let packet = try KnotPacket(parsingInPlace: message, memory: memory)
            return try read(packet, body)
        }
    }

    private static func read<R>(
        _ packet: borrowing KnotPacket, _ body: (BorrowedDNSQuery) throws(DNSMessageError) -> R
    ) throws(DNSMessageError) -> R {
        guard !packet.isReply else { throw DNSMessageError(.unexpected, "the message is a reply (QR is 1), not a query") }
        guard packet.opcode == UInt8(KNOT_OPCODE_QUERY.rawValue) else {
            throw DNSMessageError(.unexpected, "opcode \(packet.opcode) is not a standard query (0)")
        }
        guard packet.questionCount == 1, packet.pointer.pointee.qname_size > 0 else {
            throw DNSMessageError(.unexpected, "a query must have exactly one question, this one has \(packet.questionCount)")
        }
        return try body(try BorrowedDNSQuery(packet))
    }

    private init(_ query: BorrowedDNSQuery, bytes: [UInt8]) throws(DNSMessageError) {
        self.bytes = bytes
        id = query.id
        recursionDesired = query.recursionDesired
        checkingDisabled = query.checkingDisabled
        questionName = Array(query.questionName)
        name = try query.withName { String(decoding: $0, as: UTF8.self) }
        type = query.type
        questionClass = query.questionClass
        edns = query.edns
    }

    public func withQuestionName<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try questionName.withUnsafeBufferPointer { (name) throws(E) in try body(name) }
    }

    /// `name` (wire form) as text without the final dot (`DNSName.withText`), given to `body`.
    static func withPresentation<R>(
        _ name: UnsafePointer<UInt8>?, _ body: (UnsafeRawBufferPointer) throws(DNSMessageError) -> R
    ) throws(DNSMessageError) -> R {
        try DNSName.withText(name, nullFrom: "knot_pkt_qname", malformed: false) { (text) throws(DNSMessageError) -> R in
            let count = text.last == UInt8(ascii: ".") ? text.count - 1 : text.count
            return try body(UnsafeRawBufferPointer(rebasing: text[..<count]))
        }
    }

    /// What the query's OPT record says, nil without one.
    static func edns(_ pkt: UnsafeMutablePointer<knot_pkt_t>) throws(DNSMessageError) -> EDNS? {
        guard let opt = pkt.pointee.opt_rr else { return nil }
        var subnet: ClientSubnet?
        if let option = chttpdns_knot_ecs_option(pkt) {
            subnet = try clientSubnet(option)
        }
        return EDNS(payloadSize: knot_edns_get_payload(opt), dnssecOK: knot_edns_do(opt), clientSubnet: subnet)
    }

    /// The Client Subnet option at `option` (code, length, data) (`knot_edns_client_subnet_parse`).
    private static func clientSubnet(_ option: UnsafePointer<UInt8>) throws(DNSMessageError) -> ClientSubnet {
        var ecs = knot_edns_client_subnet_t()
        let data = UnsafeMutablePointer(mutating: option) + 4
        try Knot.check(
            knot_edns_client_subnet_parse(&ecs, data, knot_edns_opt_get_length(option)),
            "knot_edns_client_subnet_parse", malformed: true)
        let size = ecs.family == 1 ? 4 : 16
        return withUnsafeBytes(of: ecs.address) {
            ClientSubnet(
                family: ecs.family, sourcePrefixLength: ecs.source_len, scopePrefixLength: ecs.scope_len,
                rawAddress: UnsafeRawBufferPointer(rebasing: $0.prefix(size)))
        }
    }
}

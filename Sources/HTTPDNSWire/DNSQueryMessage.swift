import CKnot

/// A DNS query as a client sent it (RFC 1035 §4.1), read by libknot (`knot_pkt_parse`): a
/// standard query (QR 0, opcode QUERY) with exactly one question.
public struct DNSQueryMessage: Sendable {
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

    /// An EDNS Client Subnet option (RFC 7871).
    public struct ClientSubnet: Sendable, Equatable {
        /// 1 IPv4, 2 IPv6 (address family numbers).
        public var family: UInt16
        public var sourcePrefixLength: UInt8
        public var scopePrefixLength: UInt8
        /// The address, zero-padded to 4 or 16 bytes.
        public var address: [UInt8]

        public init(family: UInt16, sourcePrefixLength: UInt8, scopePrefixLength: UInt8, address: [UInt8]) {
            self.family = family
            self.sourcePrefixLength = sourcePrefixLength
            self.scopePrefixLength = scopePrefixLength
            self.address = address
        }
    }

    /// Reads a query. `.malformed` when libknot cannot parse it (also a bad Client Subnet
    /// option); `.unexpected` when it is a reply, another opcode, or has no or several questions.
    public static func parse(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSQueryMessage {
        let packet = try KnotPacket(parsing: bytes)
        guard !packet.isReply else { throw DNSMessageError(.unexpected, "the message is a reply (QR is 1), not a query") }
        guard packet.opcode == UInt8(KNOT_OPCODE_QUERY.rawValue) else {
            throw DNSMessageError(.unexpected, "opcode \(packet.opcode) is not a standard query (0)")
        }
        guard packet.questionCount == 1, packet.pointer.pointee.qname_size > 0 else {
            throw DNSMessageError(.unexpected, "a query must have exactly one question, this one has \(packet.questionCount)")
        }
        return try DNSQueryMessage(packet, bytes: bytes)
    }

    private init(_ packet: KnotPacket, bytes: [UInt8]) throws(DNSMessageError) {
        let pkt = packet.pointer
        self.bytes = bytes
        id = packet.id
        recursionDesired = knot_wire_get_rd(packet.wire) != 0
        checkingDisabled = knot_wire_get_cd(packet.wire) != 0
        let nameSize = Int(pkt.pointee.qname_size)
        questionName = Array(UnsafeBufferPointer(start: packet.wire + Int(KNOT_WIRE_HEADER_SIZE.rawValue), count: nameSize))
        name = try Self.presentation(knot_pkt_qname(pkt))
        type = knot_pkt_qtype(pkt)
        questionClass = knot_pkt_qclass(pkt)
        if let opt = pkt.pointee.opt_rr {
            var subnet: ClientSubnet?
            if let option = chttpdns_knot_ecs_option(pkt) {
                subnet = try Self.clientSubnet(option)
            }
            edns = EDNS(payloadSize: knot_edns_get_payload(opt), dnssecOK: knot_edns_do(opt), clientSubnet: subnet)
        } else {
            edns = nil
        }
    }

    /// `name` (wire form) as text without the final dot (`knot_dname_to_str`).
    static func presentation(_ name: UnsafePointer<UInt8>?) throws(DNSMessageError) -> String {
        let name = try Knot.require(name, "knot_pkt_qname")
        var buffer = [CChar](repeating: 0, count: 1100)
        let text = try Knot.require(
            buffer.withUnsafeMutableBufferPointer { knot_dname_to_str($0.baseAddress, name, $0.count) }.map { String(cString: $0) },
            "knot_dname_to_str")
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    /// The Client Subnet option at `option` (code, length, data) (`knot_edns_client_subnet_parse`).
    private static func clientSubnet(_ option: UnsafePointer<UInt8>) throws(DNSMessageError) -> ClientSubnet {
        var ecs = knot_edns_client_subnet_t()
        let data = UnsafeMutablePointer(mutating: option) + 4
        try Knot.check(
            knot_edns_client_subnet_parse(&ecs, data, knot_edns_opt_get_length(option)),
            "knot_edns_client_subnet_parse", malformed: true)
        let size = ecs.family == 1 ? 4 : 16
        let address = withUnsafeBytes(of: ecs.address) { Array($0.prefix(size)) }
        return ClientSubnet(family: ecs.family, sourcePrefixLength: ecs.source_len, scopePrefixLength: ecs.scope_len, address: address)
    }
}

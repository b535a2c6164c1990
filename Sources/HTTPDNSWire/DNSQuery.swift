import CKnot

/// A query as read (`DNSQueryMessage`, or `BorrowedDNSQuery` inside
/// `DNSQueryMessage.withQuery`): what a response repeats of it (`DNSResponseWriter`).
public protocol DNSQuery {
    var id: UInt16 { get }
    var recursionDesired: Bool { get }
    var checkingDisabled: Bool { get }
    var type: UInt16 { get }
    var questionClass: UInt16 { get }
    /// The query's OPT record (RFC 6891), if any.
    var edns: DNSQueryMessage.EDNS? { get }
    /// Gives `body` the question name in wire form as sent (case kept).
    func withQuestionName<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R
}

/// A query libknot read where its message lies (`DNSQueryMessage.withQuery`): the fields of
/// `DNSQueryMessage` without its copies. Its pointers (the question name, the packet) are valid
/// only inside the closure it is given to, which must not keep it.
public struct BorrowedDNSQuery: DNSQuery {
    private let packet: UnsafeMutablePointer<knot_pkt_t>
    public let id: UInt16
    public let recursionDesired: Bool
    public let checkingDisabled: Bool
    /// The question name in wire form as sent (case kept), in the parsed message.
    public let questionName: UnsafeBufferPointer<UInt8>
    public let type: UInt16
    public let questionClass: UInt16
    public let edns: DNSQueryMessage.EDNS?

    init(_ packet: borrowing KnotPacket) throws(DNSMessageError) {
        let pkt = packet.pointer
        self.packet = pkt
        id = packet.id
        recursionDesired = knot_wire_get_rd(packet.wire) != 0
        checkingDisabled = knot_wire_get_cd(packet.wire) != 0
        questionName = UnsafeBufferPointer(start: packet.wire + Int(KNOT_WIRE_HEADER_SIZE.rawValue), count: Int(pkt.pointee.qname_size))
        type = knot_pkt_qtype(pkt)
        questionClass = knot_pkt_qclass(pkt)
        edns = try DNSQueryMessage.edns(pkt)
    }

    /// Gives `body` the question name in presentation form, lower-case, without the final dot
    /// (empty for the root), as `DNSQueryMessage.name` has it (`knot_dname_to_str`, on the stack).
    public func withName<R>(_ body: (UnsafeRawBufferPointer) throws(DNSMessageError) -> R) throws(DNSMessageError) -> R {
        try DNSQueryMessage.withPresentation(knot_pkt_qname(packet), body)
    }

    public func withQuestionName<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(questionName)
    }
}

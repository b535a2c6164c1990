import CKnot

/// What the service needs to know of a reply message, read by libknot (`knot_pkt_parse`).
public struct DNSReplySummary: Sendable, Equatable {
    public var id: UInt16
    /// The RCODE, with the EDNS extension.
    public var rcode: UInt16
    /// Records in the answer section.
    public var answerCount: Int
    /// The smallest TTL of the records in every section (OPT and TSIG left out; an SOA counts
    /// with min(TTL, MINIMUM), RFC 2308 §5); nil when there are none.
    public var minimumTTL: UInt32?
    /// min(TTL, MINIMUM) of the first SOA in the authority section (RFC 2308 §5), nil without one.
    public var negativeTTL: UInt32?
    /// The question's type and class, nil for a reply without a question.
    public var questionType: UInt16?
    /// The question name, wire form, lower-case.
    public var questionName: [UInt8]?

    /// Reads a reply. `.malformed` when libknot cannot parse it, `.unexpected` when it is a query.
    public static func parse(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSReplySummary {
        let packet = try KnotPacket(parsing: bytes)
        guard packet.isReply else { throw DNSMessageError(.unexpected, "the message is a query (QR is 0), not a reply") }
        var summary = DNSReplySummary(id: packet.id, rcode: packet.rcode, answerCount: 0)
        let pkt = packet.pointer
        if pkt.pointee.qname_size > 0, let name = knot_pkt_qname(pkt) {
            summary.questionType = knot_pkt_qtype(pkt)
            summary.questionName = Array(UnsafeBufferPointer(start: name, count: Int(pkt.pointee.qname_size)))
        }
        for section in [KNOT_ANSWER, KNOT_AUTHORITY, KNOT_ADDITIONAL] {
            for rrset in packet.rrsets(section) {
                let type = rrset.pointee.type
                if section == KNOT_ANSWER { summary.answerCount += Int(rrset.pointee.rrs.count) }
                guard type != UInt16(KNOT_RRTYPE_OPT.rawValue), type != UInt16(KNOT_RRTYPE_TSIG.rawValue), rrset.pointee.rrs.count > 0 else {
                    continue
                }
                var ttl = rrset.pointee.ttl
                if type == UInt16(KNOT_RRTYPE_SOA.rawValue) {
                    ttl = min(ttl, knot_soa_minimum(chttpdns_knot_rdata_at(rrset, 0)))
                    if section == KNOT_AUTHORITY && summary.negativeTTL == nil { summary.negativeTTL = ttl }
                }
                summary.minimumTTL = min(summary.minimumTTL ?? ttl, ttl)
            }
        }
        return summary
    }
}

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
    /// That SOA (the zone a negative answer came from), nil without one.
    public var soa: DNSSOARecord?
    /// The question's type and class, nil for a reply without a question.
    public var questionType: UInt16?
    /// The question name, wire form, lower-case.
    public var questionName: [UInt8]?
    /// The CNAME records of the answer section, in order (`knot_cname_name`).
    public var aliases: [Alias] = []

    /// One CNAME record: its owner and target as text (`knot_dname_to_str`), and its TTL.
    public struct Alias: Sendable, Equatable {
        public var owner: String
        public var target: String
        public var ttl: UInt32
    }

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
                if section == KNOT_ANSWER, type == UInt16(KNOT_RRTYPE_CNAME.rawValue), rrset.pointee.rrs.count > 0,
                    let owner = text(rrset.pointee.owner),
                    let target = text(knot_cname_name(chttpdns_knot_rdata_at(rrset, 0)))
                {
                    summary.aliases.append(Alias(owner: owner, target: target, ttl: rrset.pointee.ttl))
                }
                guard type != UInt16(KNOT_RRTYPE_OPT.rawValue), type != UInt16(KNOT_RRTYPE_TSIG.rawValue), rrset.pointee.rrs.count > 0
                else {
                    continue
                }
                var ttl = rrset.pointee.ttl
                if type == UInt16(KNOT_RRTYPE_SOA.rawValue) {
                    ttl = min(ttl, knot_soa_minimum(chttpdns_knot_rdata_at(rrset, 0)))
                    if section == KNOT_AUTHORITY && summary.negativeTTL == nil {
                        summary.negativeTTL = ttl
                        summary.soa = try DNSSOARecord(rrset)
                    }
                }
                summary.minimumTTL = min(summary.minimumTTL ?? ttl, ttl)
            }
        }
        return summary
    }

    /// A name as text (`knot_dname_to_str`), nil when libknot cannot write it.
    private static func text(_ name: UnsafePointer<knot_dname_t>?) -> String? {
        guard let name else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(KNOT_DNAME_TXT_MAXLEN) + 1)
        guard knot_dname_to_str(&buffer, name, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import HTTPDNSCore
import HTTPDNSWire

/// Turns a DNS reply message into an ``UpstreamAnswer``: addresses and TTLs by walking the
/// message in place (``DNSAnswerWalk``: the records of the asked type along the CNAME chain, each
/// TTL capped by the chain's, so the smallest is the answer's), the RCODE from the header, and for
/// a reply without addresses the negative TTL from an SOA in the authority section and where a
/// dangling CNAME chain points through libknot (`DNSReplySummary`), with that SOA itself for a
/// negative answer. Pure.
enum DNSReplyParser {
    /// At most this many addresses are read from one reply.
    static let maximumAddresses = 64

    static func parse(_ message: [UInt8], family: RecordFamily) -> Result<UpstreamAnswer, UpstreamError> {
        guard message.count >= 12 else {
            return .failure(UpstreamError(.malformed, "DNS reply of \(message.count) bytes is shorter than a header"))
        }
        guard message[2] & 0x80 != 0 else {
            return .failure(UpstreamError(.malformed, "DNS message is not a reply (QR is 0)"))
        }
        let rcode = Int(message[3] & 0x0F)
        switch rcode {
        case 0:
            break
        case 3:
            do throws(DNSMessageError) {
                let summary = try DNSReplySummary.parse(message)
                return .success(
                    UpstreamAnswer(
                        addresses: [], ttl: nil, nxdomain: true, negativeTTL: summary.negativeTTL,
                        soa: summary.soa.flatMap(NegativeAnswerSOA.init))
                )
            } catch {
                return .failure(UpstreamError(.malformed, "NXDOMAIN reply does not parse: \(error.message)"))
            }
        default:
            return .failure(UpstreamError(.serverFailure, "DNS RCODE \(rcode)", underlying: rcode))
        }
        let walked: DNSAnswerWalk
        do throws(DNSAnswerWalk.Malformed) {
            walked = try message.withUnsafeBufferPointer { (bytes) throws(DNSAnswerWalk.Malformed) in
                try DNSAnswerWalk.walk(bytes, family: family, maximumAddresses: maximumAddresses)
            }
        } catch {
            return .failure(UpstreamError(.malformed, "DNS reply does not parse: \(error.message)"))
        }
        if !walked.addresses.isEmpty {
            return .success(UpstreamAnswer(addressList: walked.addresses, ttl: walked.ttl ?? 0))
        }
        let summary: DNSReplySummary
        do throws(DNSMessageError) {
            summary = try DNSReplySummary.parse(message)
        } catch {
            return .failure(UpstreamError(.malformed, "NODATA reply does not parse: \(error.message)"))
        }
        // A reply that ends in a CNAME without addresses: say where it points, for the engine.
        if let end = cnameChain(summary) {
            return .success(UpstreamAnswer(addresses: [], ttl: end.ttl ?? 0, negativeTTL: summary.negativeTTL, cnameTarget: end.target))
        }
        return .success(
            UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: summary.negativeTTL, soa: summary.soa.flatMap(NegativeAnswerSOA.init)))
    }

    /// Where the answer section's CNAMEs lead from the first one's owner (the asked name), and
    /// the minimum TTL over the links taken; nil without a CNAME.
    static func cnameChain(_ summary: DNSReplySummary) -> (target: HostName, ttl: UInt32?)? {
        var chain = CNAMEChain()
        for alias in summary.aliases {
            guard let owner = HostName(alias.owner), let target = HostName(alias.target) else { return nil }
            chain.add(owner: owner, target: target, ttl: alias.ttl)
        }
        return chain.firstOwner.flatMap { chain.end(from: $0) }
    }
}

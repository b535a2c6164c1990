import HTTPDNSCore
import HTTPDNSWire

/// Whether a reply to a forwarded query may be passed on (one rule for every forwarder).
enum DNSReplyCheck {
    /// `reply` when it parses as a reply (`DNSReplySummary`) with RCODE NOERROR or NXDOMAIN;
    /// `.malformed` or `.serverFailure` (the RCODE as `underlying`) otherwise, so the chain
    /// moves on to the next upstream.
    static func checked(_ reply: [UInt8]) -> Result<[UInt8], UpstreamError> {
        let summary: DNSReplySummary
        do throws(DNSMessageError) {
            summary = try DNSReplySummary.parse(reply)
        } catch {
            return .failure(
                UpstreamError(.malformed, "DNS reply does not parse: \(error.message)", underlying: error.underlying.map(Int.init)))
        }
        guard summary.rcode == 0 || summary.rcode == 3 else {
            return .failure(UpstreamError(.serverFailure, "DNS RCODE \(summary.rcode)", underlying: Int(summary.rcode)))
        }
        return .success(reply)
    }
}

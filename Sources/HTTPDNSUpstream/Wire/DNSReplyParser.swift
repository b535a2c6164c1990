import CAres
import HTTPDNSCore
import HTTPDNSWire

/// Turns a DNS reply message into an ``UpstreamAnswer``: addresses and TTLs through c-ares
/// (`ares_parse_a_reply` / `ares_parse_aaaa_reply` with addrttls, so the TTL is already the
/// minimum over the CNAME chain), the RCODE from the header, and the negative TTL from an SOA in
/// the authority section (which c-ares 1.18's `ares_parse_soa_reply` does not read) through
/// libknot (`DNSReplySummary`), with that SOA itself for a negative answer. Pure.
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
        let parsed: (status: Int32, addresses: [String], ttl: UInt32?)
        switch family {
        case .a: parsed = parseA(message)
        case .aaaa: parsed = parseAAAA(message)
        }
        switch parsed.status {
        case ARES_SUCCESS where !parsed.addresses.isEmpty:
            return .success(UpstreamAnswer(addresses: parsed.addresses, ttl: parsed.ttl ?? 0))
        case ARES_SUCCESS, ARES_ENODATA:
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
                UpstreamAnswer(
                    addresses: [], ttl: nil, negativeTTL: summary.negativeTTL, soa: summary.soa.flatMap(NegativeAnswerSOA.init)))
        default:
            return .failure(
                UpstreamError(
                    .malformed, "DNS reply does not parse: " + String(cString: ares_strerror(parsed.status)), underlying: Int(parsed.status)
                ))
        }
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

    private static func parseA(_ message: [UInt8]) -> (status: Int32, addresses: [String], ttl: UInt32?) {
        var records = [ares_addrttl](repeating: ares_addrttl(), count: maximumAddresses)
        var count = Int32(maximumAddresses)
        let status = ares_parse_a_reply(message, Int32(message.count), nil, &records, &count)
        guard status == ARES_SUCCESS else { return (status, [], nil) }
        var addresses: [String] = []
        var ttl: UInt32?
        for record in records.prefix(Int(max(0, count))) {
            var address = record.ipaddr
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            guard let text = IPAddress(family: .a, bytes: bytes)?.description else { continue }
            addresses.append(text)
            let recordTTL = UInt32(max(0, record.ttl))
            ttl = min(ttl ?? recordTTL, recordTTL)
        }
        return (status, addresses, ttl)
    }

    private static func parseAAAA(_ message: [UInt8]) -> (status: Int32, addresses: [String], ttl: UInt32?) {
        var records = [ares_addr6ttl](repeating: ares_addr6ttl(), count: maximumAddresses)
        var count = Int32(maximumAddresses)
        let status = ares_parse_aaaa_reply(message, Int32(message.count), nil, &records, &count)
        guard status == ARES_SUCCESS else { return (status, [], nil) }
        var addresses: [String] = []
        var ttl: UInt32?
        for var record in records.prefix(Int(max(0, count))) {
            var bytes = [UInt8](repeating: 0, count: 16)
            chttpdns_ares_addr6_bytes(&record, &bytes)
            guard let text = IPAddress(family: .aaaa, bytes: bytes)?.description else { continue }
            addresses.append(text)
            let recordTTL = UInt32(max(0, record.ttl))
            ttl = min(ttl ?? recordTTL, recordTTL)
        }
        return (status, addresses, ttl)
    }
}

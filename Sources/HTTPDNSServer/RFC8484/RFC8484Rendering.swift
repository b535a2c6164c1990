import HTTPDNSCore
import HTTPDNSWire

/// RFC 8484 responses (`application/dns-message`) over the engine's answers and the upstreams'
/// replies, written by libknot (`DNSResponseWriter`). Every one carries `Cache-Control:
/// max-age=` the smallest TTL it holds (RFC 8484 §5.1).
enum RFC8484Rendering {
    /// The engine's answer to an A or AAAA question: its addresses as records owned by the
    /// question name (a CNAME chain is flattened; the TTL is the chain's smallest), NXDOMAIN as
    /// RCODE 3 and NODATA as an empty NOERROR, each with the zone's SOA in the authority section
    /// when the upstream gave one, sent with the answer's remaining TTL (RFC 2308 §3, §5),
    /// SERVFAIL when nothing could be resolved.
    static func answer(_ result: HostResult, query: DNSQueryMessage, subnetScope: UInt8) -> HTTPResponse {
        guard let answer = result.answers.first?.1 else {
            return serverFailure(query)
        }
        let rcode = answer.nxdomain ? DNSResponseWriter.nameError : DNSResponseWriter.noError
        let records = answer.nxdomain ? [] : recordData(answer.addressList)
        let authority = answer.soa.map { DNSResponseWriter.Authority(soa: DNSSOARecord($0), ttl: answer.ttl) }
        let body: [UInt8]
        do throws(DNSMessageError) {
            body = try DNSResponseWriter.response(
                to: query, rcode: rcode, answer: .init(type: query.type, ttl: answer.ttl, records: records), authority: authority,
                subnetScope: subnetScope)
        } catch {
            return writeFailure(error)
        }
        return message(body, maxAge: answer.ttl)
    }

    /// The RDATA of each address: packed IPv4 addresses (the usual cached form) straight from
    /// their numbers, others parsed from their text.
    static func recordData(_ list: AddressList) -> [[UInt8]] {
        guard let packed = list.packedIPv4 else { return list.strings.compactMap { IPAddress($0)?.bytes } }
        let numbers: [UInt32] = [packed.first, packed.second, packed.third]
        return numbers.prefix(packed.count).map { (address: UInt32) -> [UInt8] in
            withUnsafeBytes(of: address.bigEndian) { Array($0) }
        }
    }

    /// An upstream's reply to a forwarded query, with the query's ID; SERVFAIL when it does not
    /// parse or answers another question.
    static func forwarded(_ reply: [UInt8], query: DNSQueryMessage) -> HTTPResponse {
        let summary: DNSReplySummary
        do throws(DNSMessageError) {
            summary = try DNSReplySummary.parse(reply)
        } catch {
            return serverFailure(query)
        }
        guard summary.questionType == query.type else {
            return serverFailure(query)
        }
        return message(DNSResponseWriter.forwarded(reply, to: query), maxAge: summary.minimumTTL ?? 0)
    }

    /// SERVFAIL (RCODE 2) for `query`, not to be cached.
    static func serverFailure(_ query: DNSQueryMessage) -> HTTPResponse {
        do throws(DNSMessageError) {
            return message(try DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.serverFailure, answer: nil), maxAge: 0)
        } catch {
            return writeFailure(error)
        }
    }

    /// Whether a 200 response carries an answer (RCODE NOERROR or NXDOMAIN) rather than SERVFAIL.
    static func isAnswer(_ response: HTTPResponse) -> Bool {
        response.body.count >= 4 && response.body[3] & 0x0F != DNSResponseWriter.serverFailure
    }

    private static func message(_ body: [UInt8], maxAge: UInt32) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: HTTPDNSService.dnsMessageType, headers: [("Cache-Control", "max-age=\(maxAge)")], body: body)
    }

    private static func writeFailure(_ error: DNSMessageError) -> HTTPResponse {
        Log.error("RFC 8484: a response could not be written: \(error)")
        return APIError(.internalError, "the DNS response could not be written").response
    }
}

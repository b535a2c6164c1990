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
    /// SERVFAIL when nothing could be resolved, REFUSED for a name the account's `domains`
    /// refuses.
    static func answer(_ result: HostResult, query: DNSQueryMessage, subnetScope: UInt8) -> HTTPResponse {
        guard let answer = result.answers.first?.1 else {
            return result.failure?.notAllowed == true ? refused(query) : serverFailure(query)
        }
        let body: [UInt8]
        do throws(DNSMessageError) {
            let (rcode, records, authority) = try response(to: answer, type: query.type)
            body = try DNSResponseWriter.response(
                to: query, rcode: rcode, answer: records, authority: authority, subnetScope: subnetScope)
        } catch {
            return writeFailure(error)
        }
        return message(body, maxAge: answer.ttl)
    }

    /// The same response for the fast path: a cached answer, written by libknot straight into
    /// memory that libmicrohttpd takes over. Nil when libknot fails (the general path then writes
    /// the error).
    static func fastAnswer(_ answer: ResolvedAnswer, query: BorrowedDNSQuery, subnetScope: UInt8) -> FastResponse? {
        guard let (rcode, records, authority) = try? response(to: answer, type: query.type) else { return nil }
        return FastResponse(
            bound: DNSResponseWriter.bound(for: query, answer: records, authority: authority), source: answer.source,
            contentType: RFC8484Handler.dnsMessageType, maxAge: answer.ttl
        ) { buffer in
            try? DNSResponseWriter.write(
                to: query, rcode: rcode, answer: records, authority: authority, subnetScope: subnetScope,
                into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The RCODE, answer section and authority section (a negative answer's SOA, sent with the
    /// answer's remaining TTL) of the engine's answer to a question of `type`. `.malformed`
    /// when a kept SOA's names are not ones libknot reads.
    private static func response(
        to answer: ResolvedAnswer, type: UInt16
    ) throws(DNSMessageError) -> (UInt8, DNSResponseWriter.Answer, DNSResponseWriter.Authority?) {
        var authority: DNSResponseWriter.Authority?
        if let soa = answer.soa { authority = try DNSResponseWriter.Authority(soa: DNSSOARecord(soa), ttl: answer.ttl) }
        if answer.nxdomain {
            return (DNSResponseWriter.nameError, DNSResponseWriter.Answer(type: type, ttl: answer.ttl, records: []), authority)
        }
        // Packed IPv4 addresses (the usual cached form) go straight from their numbers.
        if type == 1, let packed = answer.addressList.packedIPv4 {
            return (
                DNSResponseWriter.noError,
                DNSResponseWriter.Answer(
                    ttl: answer.ttl, ipv4: packed.first, packed.second, packed.third, count: packed.count), authority
            )
        }
        return (
            DNSResponseWriter.noError,
            DNSResponseWriter.Answer(type: type, ttl: answer.ttl, records: recordData(answer.addressList)), authority
        )
    }

    /// The RDATA of each address, parsed from its text.
    private static func recordData(_ list: AddressList) -> [[UInt8]] {
        list.strings.compactMap { IPAddress($0)?.bytes }
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
        empty(query, rcode: DNSResponseWriter.serverFailure)
    }

    /// REFUSED (RCODE 5) for `query`, not to be cached: the account's `domains` refuses its name.
    static func refused(_ query: DNSQueryMessage) -> HTTPResponse {
        empty(query, rcode: DNSResponseWriter.refused)
    }

    /// A response with `rcode` and no records, not to be cached.
    private static func empty(_ query: DNSQueryMessage, rcode: UInt8) -> HTTPResponse {
        do throws(DNSMessageError) {
            return message(try DNSResponseWriter.response(to: query, rcode: rcode, answer: nil), maxAge: 0)
        } catch {
            return writeFailure(error)
        }
    }

    /// Whether a 200 response carries an answer (RCODE NOERROR or NXDOMAIN) rather than SERVFAIL.
    static func isAnswer(_ response: HTTPResponse) -> Bool {
        response.body.count >= 4 && response.body[3] & 0x0F != DNSResponseWriter.serverFailure
    }

    private static func message(_ body: [UInt8], maxAge: UInt32) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: RFC8484Handler.dnsMessageType, headers: [CacheControl.header(maxAge: maxAge)], body: body)
    }

    private static func writeFailure(_ error: DNSMessageError) -> HTTPResponse {
        Log.error("RFC 8484: a response could not be written: \(error)")
        return APIError(.internalError, "the DNS response could not be written").response
    }
}

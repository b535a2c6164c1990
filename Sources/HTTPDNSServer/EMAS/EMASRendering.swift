import HTTPDNSCore

/// The EMAS HTTPDNS API's bodies over the engine's answers, written by the same writer as API v1
/// (`AnswerRendering.writeHostAndAddresses`): only the end of an answer object differs.
enum EMASRendering {
    /// `{"host":"H","ips":[..],"ipsv6":[..],"ttl":N,"origin_ttl":N,"client_ip":"C"}` for `/d`;
    /// a host that no upstream could resolve is `UpstreamFailed` or `UpstreamTimeout` (the
    /// client falls back to its system resolver, as on any error). A host the account's
    /// `domains` refuses is an empty answer (`refusedTTL`), which the SDKs take as "use the
    /// system resolver".
    static func single(_ result: HostResult, clientIP: String) -> HTTPResponse {
        if let failure = result.failure, !failure.notAllowed { return error(APIError(failure, host: result.host)) }
        var writer = JSONWriter()
        withParts(result) { host, ipv4, ipv6, ttl, originTTL in
            writeSingle(
                host: host, ipv4: ipv4, ipv6: ipv6, ttl: ttl, originTTL: originTTL, clientIP: clientIP, extra: result.extra, to: &writer)
        }
        return .json(200, writer)
    }

    /// The `ttl` and `origin_ttl` of the empty answer to a host the account's `domains`
    /// refuses, seconds: how long an SDK keeps resolving it itself before it asks again.
    static let refusedTTL = AccountConfig.answerDefaultTTL

    /// The same body for the fast path: one family's cached answer, written in one pass into
    /// memory that libmicrohttpd takes over. `host` is a valid name in canonical form.
    static func fastSingle(host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, clientIP: String) -> FastResponse
    {
        // Every fixed part together (both numbers at 10 digits, the other family's `[]`) is under 128 bytes.
        let bound = 128 + host.count + AnswerRendering.maximumAddresses(answer.addressList) + ByteCursor.maximumString(clientIP.utf8.count)
        return FastResponse(bound: bound, source: answer.source) { buffer in
            var cursor = ByteCursor(buffer)
            writeSingle(
                host: host, ipv4: family == .a ? answer.addressList : nil, ipv6: family == .aaaa ? answer.addressList : nil,
                ttl: answer.ttl, originTTL: answer.originTTL, clientIP: clientIP, to: &cursor)
            return cursor.count
        }
    }

    /// `{"host":..,"ips":[..],"ipsv6":[..],"ttl":N,"origin_ttl":N[,"extra":"E"],"client_ip":"C"}`:
    /// the one writer of `/d`'s answer, for both paths (`extra`: a rule's answer, never cached).
    private static func writeSingle<Sink: JSONSink>(
        host: UnsafeBufferPointer<UInt8>, ipv4: AddressList?, ipv6: AddressList?, ttl: UInt32, originTTL: UInt32, clientIP: String,
        extra: String? = nil, to sink: inout Sink
    ) {
        writeAnswer(host: host, ipv4: ipv4, ipv6: ipv6, ttl: ttl, originTTL: originTTL, to: &sink)
        writeExtra(extra, to: &sink)
        sink.put(#","client_ip":"#)
        sink.string(clientIP)
        sink.put("}")
    }

    /// `{"dns":[{"host":..,"ips":..,"ipsv6":..,"ttl":..,"origin_ttl":..}, ...]}` for `/resolve`,
    /// one element per host in the order asked; hosts that could not be resolved are left out
    /// (the client resolves those itself); a host the account's `domains` refuses is an empty
    /// answer, as in `single`.
    static func batch(_ results: [HostResult]) -> HTTPResponse {
        var writer = JSONWriter(capacity: 128 * results.count + 16)
        writer.raw(#"{"dns":["#)
        var first = true
        for result in results where result.failure?.notAllowed ?? true {
            if !first { writer.comma() }
            first = false
            writeAnswer(result, to: &writer)
            writeExtra(result.extra, to: &writer)
            writer.raw("}")
        }
        writer.raw("]}")
        return .json(200, writer)
    }

    /// `{"host":..,"ips":[..],"ipsv6":[..],"ttl":N,"origin_ttl":N` (no closing brace): with both
    /// families, the smaller TTLs.
    private static func writeAnswer(_ result: HostResult, to writer: inout JSONWriter) {
        withParts(result) { host, ipv4, ipv6, ttl, originTTL in
            writeAnswer(host: host, ipv4: ipv4, ipv6: ipv6, ttl: ttl, originTTL: originTTL, to: &writer)
        }
    }

    /// The parts of `result`'s answer object: its name's bytes, each family's list, and the
    /// smaller TTLs (`refusedTTL` and no lists for a refused host).
    private static func withParts(
        _ result: HostResult, _ body: (UnsafeBufferPointer<UInt8>, AddressList?, AddressList?, UInt32, UInt32) -> Void
    ) {
        let answers = result.answers
        let refused = result.failure?.notAllowed == true
        var name = result.host.value
        name.withUTF8 { name in
            body(
                name, answers.first { $0.0 == .a }?.1.addressList, answers.first { $0.0 == .aaaa }?.1.addressList,
                refused ? refusedTTL : answers.map(\.1.ttl).min() ?? 0, refused ? refusedTTL : answers.map(\.1.originTTL).min() ?? 0)
        }
    }

    /// The same from its parts, into any sink: the one writer of an EMAS answer object (without
    /// its closing brace; a nil list is `[]`).
    private static func writeAnswer<Sink: JSONSink>(
        host: UnsafeBufferPointer<UInt8>, ipv4: AddressList?, ipv6: AddressList?, ttl: UInt32, originTTL: UInt32, to sink: inout Sink
    ) {
        AnswerRendering.writeHostAndAddresses(host: host, ipv4: ipv4, ipv6: ipv6, to: &sink)
        sink.put(#","ttl":"#)
        sink.decimal(ttl)
        sink.put(#","origin_ttl":"#)
        sink.decimal(originTTL)
    }

    /// `,"extra":"TEXT"`: the `extra` of the rule that answered (docs/rules.md), as EMAS answers
    /// carry it; nothing for other answers.
    private static func writeExtra<Sink: JSONSink>(_ extra: String?, to sink: inout Sink) {
        guard let extra else { return }
        sink.put(#","extra":"#)
        sink.string(extra)
    }

    /// `{"service_ip":[..],"service_ipv6":[..]}`: IPv6 entries (`2001:db8::1`,
    /// `[2001:db8::1]:8080`) in the second list, the rest in the first.
    static func serviceAddresses(_ addresses: [String]) -> HTTPResponse {
        let isIPv6 = { (text: String) in text.hasPrefix("[") || text.filter { $0 == ":" }.count > 1 }
        var writer = JSONWriter()
        writer.raw(#"{"service_ip":"#)
        writer.stringArray(addresses.filter { !isIPv6($0) })
        writer.raw(#","service_ipv6":"#)
        writer.stringArray(addresses.filter(isIPv6))
        writer.raw("}")
        return .json(200, writer)
    }

    /// An error as the EMAS API has it: `{"code":"C","message":"M"}`. The codes it defines keep
    /// their meaning: an unknown account is `InvalidAccount` (403), a refused or missing client
    /// signature `InvalidSignature` (403), a failure of httpdnsd itself `InternalError` (500).
    /// A host no upstream could resolve is the upstreams' failure, not httpdnsd's: it keeps
    /// `UpstreamFailed` (502) or `UpstreamTimeout` (504), as in API v1. The other client errors
    /// keep their code and status (`Forbidden` 403 for an account that requires encryption,
    /// `RateLimited` 429, `InvalidParameter` 400), and their headers (`Allow`, `Retry-After`).
    static func error(_ error: APIError) -> HTTPResponse {
        var code = error.code
        switch error.code {
        case .unknownAccount: code = .invalidAccount
        case .unauthorized: code = .invalidSignature
        case .upstreamFailed, .upstreamTimeout: break
        default: if code.status >= 500 { code = .internalError }
        }
        var writer = JSONWriter()
        writer.raw(#"{"code":"#)
        writer.string(code.rawValue)
        writer.raw(#","message":"#)
        writer.string(error.message)
        writer.raw("}")
        return HTTPResponse(status: code.status, headers: error.headers.filter { $0.0 != "WWW-Authenticate" }, body: writer.bytes)
    }
}

extension APIError.Code {
    /// EMAS API: the account does not exist.
    static let invalidAccount = Self("InvalidAccount", status: 403)
    /// EMAS API: `t` is in the past.
    static let signatureExpired = Self("SignatureExpired", status: 403)
    /// EMAS API: a missing, malformed or wrong signature, or `t` too far ahead.
    static let invalidSignature = Self("InvalidSignature", status: 403)
}

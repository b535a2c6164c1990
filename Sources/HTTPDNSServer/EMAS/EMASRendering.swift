import HTTPDNSCore

/// The EMAS HTTPDNS API's bodies over the engine's answers, written by the same writer as API v1
/// (`AnswerRendering.writeHostAndAddresses`): only the end of an answer object differs.
enum EMASRendering {
    /// `{"host":"H","ips":[..],"ipsv6":[..],"ttl":N,"origin_ttl":N,"client_ip":"C"}` for `/d`;
    /// a host that could not be resolved is an `InternalError` (the client falls back to its
    /// system resolver).
    static func single(_ result: HostResult, clientIP: String) -> HTTPResponse {
        if let failure = result.failure { return error(APIError(failure, host: result.host)) }
        var writer = JSONWriter()
        writeAnswer(result, to: &writer)
        writer.raw(#","client_ip":"#)
        writer.string(clientIP)
        writer.raw("}")
        return .json(200, writer)
    }

    /// `{"dns":[{"host":..,"ips":..,"ipsv6":..,"ttl":..,"origin_ttl":..}, ...]}` for `/resolve`,
    /// one element per host in the order asked; hosts that could not be resolved are left out
    /// (the client resolves those itself).
    static func batch(_ results: [HostResult]) -> HTTPResponse {
        var writer = JSONWriter(capacity: 128 * results.count + 16)
        writer.raw(#"{"dns":["#)
        var first = true
        for result in results where result.failure == nil {
            if !first { writer.comma() }
            first = false
            writeAnswer(result, to: &writer)
            writer.raw("}")
        }
        writer.raw("]}")
        return .json(200, writer)
    }

    /// `{"host":..,"ips":[..],"ipsv6":[..],"ttl":N,"origin_ttl":N` (no closing brace): with both
    /// families, the smaller TTLs.
    private static func writeAnswer(_ result: HostResult, to writer: inout JSONWriter) {
        let answers = result.answers
        AnswerRendering.writeHostAndAddresses(result.host, answers, to: &writer)
        writer.raw(#","ttl":"#)
        writer.number(answers.map(\.1.ttl).min() ?? 0)
        writer.raw(#","origin_ttl":"#)
        writer.number(answers.map(\.1.originTTL).min() ?? 0)
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
    /// signature `InvalidSignature` (403), a server-side failure `InternalError` (500); the other
    /// client errors keep their code and status (`Forbidden` 403 for an account that requires
    /// encryption, `RateLimited` 429, `InvalidParameter` 400), and their headers (`Allow`,
    /// `Retry-After`).
    static func error(_ error: APIError) -> HTTPResponse {
        var code = error.code
        switch error.code {
        case .unknownAccount: code = .invalidAccount
        case .unauthorized: code = .invalidSignature
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

import HTTPDNSCore

/// Turns an EMAS HTTPDNS API body (`{"host":"H","ips":[...],"ipsv6":[...],"ttl":60}`,
/// WIRE-FORMATS §3) into an ``UpstreamAnswer``. Pure: no I/O.
enum HTTPDNSAPIParser {
    static func parse(_ body: [UInt8], family: RecordFamily) -> Result<UpstreamAnswer, UpstreamError> {
        guard let object = JSONValue.read(body), object.isObject else {
            return .failure(UpstreamError(.malformed, "body is not a JSON object: " + String(decoding: body.prefix(120), as: UTF8.self)))
        }
        if let code = object["code"]?.string, object["ips"] == nil, object["ipsv6"] == nil {
            return .failure(error(forCode: code))
        }
        let key = family == .a ? "ips" : "ipsv6"
        guard object["ips"] != nil || object["ipsv6"] != nil else {
            return .failure(UpstreamError(.malformed, "neither ips nor ipsv6 in the answer"))
        }
        let list = object[key]?.array ?? []
        let addresses = list.compactMap { $0.string.flatMap(IPAddress.init) }
            .filter { $0.family == family }
            .map(\.description)
        let ttl = object["ttl"].flatMap(DoHJSONParser.integer).map { UInt32(clamping: max(0, $0)) }
        if addresses.isEmpty {
            return .success(UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: ttl))
        }
        return .success(UpstreamAnswer(addresses: addresses, ttl: ttl))
    }

    /// The documented error codes, for bodies that carry one with a 2xx status.
    static func error(forCode code: String) -> UpstreamError {
        switch code {
        case "InvalidAccount", "SignatureExpired", "InvalidSignature", "ApiNotAuthorized":
            return UpstreamError(.permission, "HTTPDNS API: \(code)")
        case "MissingArgument", "InvalidHost", "TooManyHosts", "InvalidDuration", "InvalidIP":
            return UpstreamError(.badRequest, "HTTPDNS API: \(code)")
        case "MethodNotAllowed":
            return UpstreamError(.notFound, "HTTPDNS API: \(code)")
        default:
            return UpstreamError(.serverFailure, "HTTPDNS API: \(code)")
        }
    }
}

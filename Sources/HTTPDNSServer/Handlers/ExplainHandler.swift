import Foundation
import HTTPDNSCore

/// `GET /v1/{account}/policy/explain?host=H[&client_ip=IP][&sdns-NAME=V...]`: what would answer
/// a name for a client, and why, without resolving it (EMAS's "try it online"): the `domains`
/// decision, each rule naming the host with the condition that held or failed (up to the one
/// that answers), the `hostOverrides` rule in force, and what answers: `refused`, `rule` or
/// `upstream` (the cache, then the upstreams). The client is `client_ip`, else the caller as
/// the service sees it (trusted `X-Forwarded-For`, the peer). Nothing is counted or cached.
extension ResolveHandler {
    func explain(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        guard let hostText = request.query["host"], !hostText.isEmpty else {
            throw APIError(.missingArgument, "the 'host' parameter is required")
        }
        guard let host = HostName(hostText) else {
            throw APIError(.invalidHost, "'\(hostText)' is not a valid host name (RFC 1035; IDN must be punycode)")
        }
        let clientIP = request.query["client_ip"]
        if let clientIP, IPAddress(clientIP) == nil {
            throw APIError(.invalidParameter, "client_ip '\(clientIP)' is not an IP address")
        }
        let address = clients.selectAddress(clientIP: clientIP, forwardedFor: request.forwardedFor, peer: request.peerAddress)
        let client = lookups.ruleClientWithGeo { RuleClient(address: address, params: Lookups.ruleParams(request.query)) }
        let config = engine.config
        let allowed = config.domains.allows(host)
        var body: [String: Any] = [
            "host": host.value, "client_ip": address?.description ?? "", "params": client.params,
            "domains": ["mode": config.domains.mode.rawValue, "allowed": allowed],
        ]
        if let geo = client.geo {
            var object: [String: Any] = ["regions": geo.regions]
            if let country = geo.country { object["country"] = country }
            if let asn = geo.asn { object["asn"] = Int(asn) }
            body["geo"] = object
        }
        let steps = allowed ? config.rules.explain(host: host, client: client) : []
        body["rules"] = steps.map { ["name": $0.rule.name, "matched": $0.matched, "reason": $0.reason] as [String: Any] }
        body["hostOverride"] = config.hostOverrides.rule(for: host).map(Self.overrideObject) ?? NSNull()
        if !allowed {
            body["answer"] = ["by": "refused", "reason": "the account's domains do not allow \(host.value)"]
        } else if let rule = steps.last(where: { $0.matched })?.rule {
            var answer: [String: Any] = [
                "by": "rule", "rule": rule.name, "ipv4": rule.answer.ipv4.map(\.description),
                "ipv6": rule.answer.ipv6.map(\.description), "ttl": Int(rule.answer.ttl),
            ]
            if !rule.answer.weights.isEmpty { answer["weights"] = rule.answer.weights.map { Int($0) } }
            if let extra = rule.extra { answer["extra"] = extra }
            body["answer"] = answer
        } else {
            body["answer"] = ["by": "upstream", "reason": steps.isEmpty ? "no rule names \(host.value)" : "no rule's conditions hold"]
        }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return .response(HTTPResponse(status: 200, body: Array(data)))
    }

    private static func overrideObject(_ rule: HostOverrides.Rule) -> [String: Any] {
        var object: [String: Any] = ["hosts": rule.hosts, "cache": rule.cache]
        if let ttl = rule.ttl { object["ttl"] = Int(ttl) }
        if let age = rule.maxStaleAge { object["maxStaleAge"] = age }
        return object
    }
}

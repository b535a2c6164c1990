import Foundation
import HTTPDNSCore
import HTTPDNSCrypto

extension HTTPDNSService {
    /// Nil for a request with the admin bearer token. Without a configured token the admin API is
    /// off (403); a missing or wrong token is 401. A refused change (PUT, DELETE) leaves an audit
    /// line.
    func adminRefusal(_ request: HTTPRequest) -> APIError? {
        let refusal: APIError
        if adminToken == nil {
            refusal = APIError(.forbidden, "the admin API is disabled: set HTTPDNS_ADMIN_TOKEN or adminToken")
        } else {
            switch checkAdminToken(request.authorization) {
            case .success(true): return nil
            case .success(false):
                refusal = APIError(.unauthorized, "missing or wrong bearer token", headers: [("WWW-Authenticate", "Bearer")])
            case .failure(let error):
                Log.error("admin API: could not check the token: \(error)")
                refusal = APIError(.internalError, "could not check the token")
            }
        }
        if request.method == "PUT" || request.method == "DELETE" {
            audit(request, result: "refused \(refusal.code.status)", detail: "")
        }
        return refusal
    }

    /// True when `header` is `Bearer <the admin token>`. The scheme name is case-insensitive
    /// (RFC 7235). The SHA-256 digests of the two tokens are compared in constant time, so
    /// neither the content nor the length of the token shows in the time taken.
    func checkAdminToken(_ header: String?) -> Result<Bool, CryptoError> {
        guard let adminToken, let header, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
            return .success(false)
        }
        do throws(CryptoError) {
            let presented = try Digest.sha256(header.utf8.dropFirst(7))
            let expected = try Digest.sha256(adminToken.utf8)
            return .success(Digest.constantTimeEquals(presented, expected))
        } catch {
            return .failure(error)
        }
    }

    /// One audit line for an admin change: who (the peer, and what a proxy said it forwarded),
    /// what (method and path), the result and `detail` (the keys changed, secrets as `***`).
    /// `Log` escapes it, so nothing in the request can end the line.
    func audit(_ request: HTTPRequest, result: String, detail: String) {
        var who = "peer=\(request.peer ?? "unknown")"
        if let forwarded = request.forwardedFor { who += " forwarded-for=\"\(forwarded)\"" }
        Log.info("audit: admin \(request.method) \(request.path) \(who) result=\(result)\(detail.isEmpty ? "" : " \(detail)")")
    }

    /// What changed from `old` to `new` (nil: no account), key by key in name order, with the
    /// values as the admin API shows them (secrets and URL credentials as `***`), e.g.
    /// `changed: maxCacheTTL 3600->600, secretKey "***"->"***"`.
    static func changeSummary(from old: AccountConfig?, to new: AccountConfig?) -> String {
        let before = old?.jsonObject(redacted: false) ?? [:]
        let after = new?.jsonObject(redacted: false) ?? [:]
        let beforeShown = old?.jsonObject(redacted: true) ?? [:]
        let afterShown = new?.jsonObject(redacted: true) ?? [:]
        var changes: [String] = []
        for key in Set(before.keys).union(after.keys).sorted() {
            let was = before[key].map(jsonText), now = after[key].map(jsonText)
            guard was != now else { continue }
            let wasShown = beforeShown[key].map(jsonText) ?? "-"
            let nowShown = afterShown[key].map(jsonText) ?? "-"
            changes.append("\(key) \(wasShown)->\(nowShown)")
        }
        return changes.isEmpty ? "changed: nothing" : "changed: " + changes.joined(separator: ", ")
    }

    private static func jsonText(_ value: Any) -> String {
        if let text = value as? String { return "\"\(text)\"" }
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "\(value)"
        }
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    private func accountJSON(_ id: String, _ config: AccountConfig) -> String {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("id")
        writer.string(id)
        writer.comma()
        writer.key("config")
        writer.raw(config.jsonText(redacted: true))
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func listAccounts() -> HandlerResult {
        let items = registry.all.map { accountJSON($0.accountID, $0.config) }
        return .response(HTTPResponse(status: 200, body: Array("{\"accounts\":[\(items.joined(separator: ","))]}".utf8)))
    }

    func getAccount(_ id: String) -> HTTPResponse {
        guard let engine = registry.engine(id) else { return APIError(.unknownAccount, "no account '\(id)'").response }
        return HTTPResponse(status: 200, body: Array(accountJSON(id, engine.config).utf8))
    }

    /// Creates or replaces an account. The change is durable before the reply (when a store is
    /// configured); keys not given take their defaults. Leaves an audit line.
    func putAccount(_ id: String, request: HTTPRequest) -> HTTPResponse {
        let existing = registry.engine(id)?.config
        var stored: AccountConfig?
        let response = putAccount(id, body: request.body, stored: &stored)
        let detail = response.status < 300 ? Self.changeSummary(from: existing, to: stored) : ""
        let result = response.status == 201 ? "created" : response.status == 200 ? "updated" : "refused \(response.status)"
        audit(request, result: result, detail: detail)
        return response
    }

    private func putAccount(_ id: String, body: [UInt8], stored: inout AccountConfig?) -> HTTPResponse {
        guard ServiceConfig.isValidAccountID(id) else {
            return APIError(.invalidParameter, ServiceConfig.accountIDRule).response
        }
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                return APIError(.invalidBody, "the body must be a JSON object of account options").response
            }
            object = parsed
        } catch {
            return APIError(.invalidBody, "the body is not valid JSON").response
        }
        var config: AccountConfig
        do {
            config = try AccountConfig(json: object, path: "", allowingRedacted: true)
        } catch {
            return APIError(.invalidParameter, error.description).response
        }
        // A configuration read back with GET carries "***" for its secrets: keep the stored ones.
        do {
            config = try config.keepingSecrets(of: registry.engine(id)?.config)
        } catch {
            return APIError(.invalidParameter, "account \(id): \(error.description)").response
        }
        do {
            try accountStore?.saveAccount(id: id, json: config.jsonText(redacted: false))
        } catch {
            Log.error("account \(id): could not save: \(error)")
            return APIError(.internalError, "could not store the account").response
        }
        let created = registry.upsert(id, config: config)
        stored = config
        return HTTPResponse(status: created ? 201 : 200, body: Array(accountJSON(id, config).utf8))
    }

    /// Deletes an account and its cache. Leaves an audit line.
    func deleteAccount(_ id: String, request: HTTPRequest) -> HTTPResponse {
        let response = deleteAccount(id)
        audit(request, result: response.status == 200 ? "deleted" : "refused \(response.status)", detail: "")
        return response
    }

    private func deleteAccount(_ id: String) -> HTTPResponse {
        guard registry.engine(id) != nil else { return APIError(.unknownAccount, "no account '\(id)'").response }
        do {
            try accountStore?.deleteAccount(id: id)
        } catch {
            Log.error("account \(id): could not delete: \(error)")
            return APIError(.internalError, "could not store the deletion").response
        }
        if let engine = registry.remove(id) { _ = engine.evictAll() }
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("deleted")
        writer.string(id)
        writer.raw("}")
        return .json(200, writer)
    }
}

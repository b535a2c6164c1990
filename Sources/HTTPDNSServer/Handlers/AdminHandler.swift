import Foundation
import HTTPDNSCore

extension HTTPDNSService {
    /// Nil for a request with the admin bearer token. Without a configured token the admin API is
    /// off (403); a missing or wrong token is 401.
    func adminRefusal(_ request: HTTPRequest) -> APIError? {
        guard let adminToken else {
            return APIError(.forbidden, "the admin API is disabled: set HTTPDNS_ADMIN_TOKEN or adminToken")
        }
        // The scheme name is case-insensitive (RFC 7235); the token is compared in constant time.
        guard let header = request.authorization, header.count > 7, header.prefix(7).lowercased() == "bearer ",
              Self.constantTimeEquals(Array(header.utf8.dropFirst(7)), Array(adminToken.utf8)) else {
            return APIError(.unauthorized, "missing or wrong bearer token", headers: [("WWW-Authenticate", "Bearer")])
        }
        return nil
    }

    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt8(lhs.count == rhs.count ? 0 : 1)
        for index in 0..<max(lhs.count, rhs.count) {
            difference |= (index < lhs.count ? lhs[index] : 0) ^ (index < rhs.count ? rhs[index] : 0)
        }
        return difference == 0
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
    /// configured); keys not given take their defaults.
    func putAccount(_ id: String, body: [UInt8]) -> HTTPResponse {
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
        Log.info("account \(id) \(created ? "created" : "updated") through the admin API (upstreams: \(config.upstreams.map(\.description).joined(separator: ", ")))")
        return HTTPResponse(status: created ? 201 : 200, body: Array(accountJSON(id, config).utf8))
    }

    func deleteAccount(_ id: String) -> HTTPResponse {
        guard registry.engine(id) != nil else { return APIError(.unknownAccount, "no account '\(id)'").response }
        do {
            try accountStore?.deleteAccount(id: id)
        } catch {
            Log.error("account \(id): could not delete: \(error)")
            return APIError(.internalError, "could not store the deletion").response
        }
        if let engine = registry.remove(id) { _ = engine.evictAll() }
        Log.info("account \(id) deleted through the admin API")
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("deleted")
        writer.string(id)
        writer.raw("}")
        return .json(200, writer)
    }
}

import Foundation
import HTTPDNSCore

/// The admin API (`/v1/accounts`): accounts listed, shown, created or replaced, deleted; each
/// change stored (when a store is configured) or shared through Redis before it is applied,
/// and audited.
struct AdminHandler: Sendable {
    let registry: AccountRegistry
    let accountStore: (any AccountPersistence)?
    let state: ServiceState

    /// One audit line for an admin change (`who` `admin`) or a tenant's change of its policy
    /// (`tenant`): who (the peer, and what a proxy said it forwarded), what (method and path),
    /// the result and `detail` (the keys changed, secrets as `***`).
    /// `Log` escapes it, so nothing in the request can end the line.
    static func audit(_ request: HTTPRequest, who role: String = "admin", result: String, detail: String) {
        var who = "peer=\(request.peer ?? "unknown")"
        if let forwarded = request.forwardedFor { who += " forwarded-for=\"\(forwarded)\"" }
        Log.info("audit: \(role) \(request.method) \(request.path) \(who) result=\(result)\(detail.isEmpty ? "" : " \(detail)")")
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
            let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            return "\(value)"
        }
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// `{"id":...,"config":{...}}` with the secrets redacted.
    private func accountJSON(_ id: String, _ config: AccountConfig) throws(ConfigError) -> String {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("id")
        writer.string(id)
        writer.comma()
        writer.key("config")
        writer.raw(try config.jsonText(redacted: true))
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `accountJSON` as a 2xx response, or a 500 (logged) when the configuration cannot be written.
    private func accountResponse(_ status: Int, _ id: String, _ config: AccountConfig) -> HTTPResponse {
        do {
            return HTTPResponse(status: status, body: Array(try accountJSON(id, config).utf8))
        } catch {
            Log.error("account \(id): \(error)")
            return APIError(.internalError, "could not write the account's configuration").response
        }
    }

    func listAccounts() -> HandlerResult {
        do {
            let items = try registry.all.map { (engine) throws(ConfigError) -> String in try accountJSON(engine.accountID, engine.config) }
            return .response(HTTPResponse(status: 200, body: Array("{\"accounts\":[\(items.joined(separator: ","))]}".utf8)))
        } catch {
            Log.error("listing accounts: \(error)")
            return .response(APIError(.internalError, "could not write an account's configuration").response)
        }
    }

    func getAccount(_ id: String) -> HTTPResponse {
        guard let engine = registry.engine(id) else { return APIError(.unknownAccount, "no account '\(id)'").response }
        return accountResponse(200, id, engine.config)
    }

    /// Creates or replaces an account (`write`); keys not given take their defaults. Leaves an
    /// audit line.
    func putAccount(_ id: String, request: HTTPRequest) -> HandlerResult {
        let existing = registry.engine(id)?.config
        let config: AccountConfig
        do throws(APIError) {
            config = try validatedAccount(id, body: request.body)
        } catch {
            Self.audit(request, result: "refused \(error.code.status)", detail: "")
            return .response(error.response)
        }
        return write(id, config: config, existing: existing, request: request) { [self] created, config in
            accountResponse(created ? 201 : 200, id, config)
        }
    }

    /// The one way an account's new configuration is made to take effect, for the admin API and
    /// the tenant's policy document (`PolicyHandler`). With Redis, written there first and
    /// applied by the replicator (`replicatedWrite`); with a store, the row is written on the
    /// store's thread (committed and synced) while the connection is suspended, and only then
    /// does the change take effect and the reply go out. `respond` writes the reply of a done
    /// change (whether the account was created, and its configuration); `finished` runs once
    /// whatever the outcome, before the reply is sent. Leaves an audit line naming `who`.
    func write(
        _ id: String, config: AccountConfig, existing: AccountConfig?, request: HTTPRequest, who: String = "admin",
        ifVersion: Int64? = nil, respond: @escaping @Sendable (_ created: Bool, AccountConfig) -> HTTPResponse,
        finished: @escaping @Sendable () -> Void = {}
    ) -> HandlerResult {
        let slot = ReplySlot()
        let reply: @Sendable (HTTPResponse) -> Void = { response in
            finished()
            slot.set(response)
        }
        if let replication = state.replication {
            replicatedWrite(
                id, config: config, existing: existing, request: request, who: who, ifVersion: ifVersion, replication,
                respond: { respond(existing == nil, config) }, reply: reply)
            return slot.result
        }
        let apply: @Sendable () -> HTTPResponse = { [self] in
            let created = registry.upsert(id, config: config)
            Self.audit(request, who: who, result: created ? "created" : "updated", detail: Self.changeSummary(from: existing, to: config))
            return respond(created, config)
        }
        guard let accountStore else {
            reply(apply())
            return slot.result
        }
        let json: String
        do {
            json = try config.jsonText(redacted: false)
        } catch {
            Log.error("account \(id): could not save: \(error)")
            Self.audit(request, who: who, result: "refused 500", detail: "")
            reply(APIError(.internalError, "could not store the account").response)
            return slot.result
        }
        accountStore.saveAccount(id: id, json: json) { result in
            switch result {
            case .success:
                reply(apply())
            case .failure(let error):
                Log.error("account \(id): could not save: \(error)")
                Self.audit(request, who: who, result: "refused 503", detail: "")
                reply(Self.storeUnavailable(error, "the account was not stored").response)
            }
        }
        return slot.result
    }

    /// A store that could not commit an account write: 503 `StoreUnavailable` with `Retry-After`
    /// (the store's backoff), the short reason and no path. Nothing changed; the client may retry.
    private static func storeUnavailable(_ error: any Error, _ what: String) -> APIError {
        let failure = error as? AccountWriteFailure
        let seconds = failure?.retryAfterSeconds ?? 1
        return APIError(
            .storeUnavailable,
            "\(what): the database cannot be written now (\(failure?.reason ?? "store failure")); nothing was changed, retry after \(seconds) s",
            headers: [("Retry-After", String(seconds))])
    }

    /// The account configuration a PUT body describes; throws the 4xx that refuses it.
    private func validatedAccount(_ id: String, body: [UInt8]) throws(APIError) -> AccountConfig {
        guard AccountID(id) != nil else { throw APIError(.invalidParameter, AccountID.rule) }
        let object: [String: Any]
        do {
            object = try parseJSONObject(Data(body), key: "body")
        } catch {
            throw APIError(.invalidBody, "\(error.description) (a JSON object of account options)")
        }
        var config: AccountConfig
        do {
            config = try AccountConfig(json: object, path: "", allowingRedacted: true)
        } catch {
            throw APIError(.invalidParameter, error.description)
        }
        // A configuration read back with GET carries "***" for its secrets: keep the stored ones.
        do {
            config = try config.keepingSecrets(of: registry.engine(id)?.config)
        } catch {
            throw APIError(.invalidParameter, "account \(id): \(error.description)")
        }
        return config
    }

    /// Deletes an account and its cache. With a store, the deletion is recorded on the store's
    /// thread first (the connection suspended meanwhile); the account goes once it is durable.
    /// Leaves an audit line.
    func deleteAccount(_ id: String, request: HTTPRequest) -> HandlerResult {
        guard registry.engine(id) != nil else {
            Self.audit(request, result: "refused 404", detail: "")
            return .response(APIError(.unknownAccount, "no account '\(id)'").response)
        }
        if let replication = state.replication {
            let slot = ReplySlot()
            replicatedWrite(
                id, config: nil, existing: registry.engine(id)?.config, request: request, who: "admin", replication,
                respond: { Self.deletedResponse(id) }, reply: { slot.set($0) })
            return slot.result
        }
        let apply: @Sendable () -> HTTPResponse = { [self] in
            if let engine = registry.remove(id) { _ = engine.evictAll() }
            Self.audit(request, result: "deleted", detail: "")
            return Self.deletedResponse(id)
        }
        guard let accountStore else { return .response(apply()) }
        let slot = ReplySlot()
        accountStore.deleteAccount(id: id) { result in
            switch result {
            case .success:
                slot.set(apply())
            case .failure(let error):
                Log.error("account \(id): could not delete: \(error)")
                Self.audit(request, result: "refused 503", detail: "")
                slot.set(Self.storeUnavailable(error, "the account was not deleted").response)
            }
        }
        return slot.result
    }

    /// The answer to a done `DELETE /v1/accounts/{id}`: `{"deleted":"id"}`.
    private static func deletedResponse(_ id: String) -> HTTPResponse {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("deleted")
        writer.string(id)
        writer.raw("}")
        return .json(200, writer)
    }

    /// An account change when replicas share their accounts (docs/replicas.md): written to Redis
    /// first, then applied here (database, registry) by the replicator, which the other replicas
    /// follow. Redis unreachable or not answering in time:
    /// 503 and nothing changed anywhere (Redis is the source of truth; a change made here alone
    /// would be undone by the next reconcile; a write Redis gets to late is refused by its
    /// deadline). With `ifVersion`, Redis makes the change only while it holds the account at
    /// that version (412 otherwise). `respond` writes the answer of a done change; `reply` is
    /// given the answer, whatever it is. Leaves an audit line.
    private func replicatedWrite(
        _ id: String, config: AccountConfig?, existing: AccountConfig?, request: HTTPRequest, who: String, ifVersion: Int64? = nil,
        _ replication: any Replication,
        respond: @escaping @Sendable () -> HTTPResponse, reply: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        replication.writeAccount(id: id, config: config, ifVersion: ifVersion) { result in
            switch result {
            case .success(let record):
                let detail = Self.changeSummary(from: existing, to: config) + " version=\(record.version)"
                if config != nil {
                    Self.audit(request, who: who, result: existing == nil ? "created" : "updated", detail: detail)
                } else {
                    Self.audit(request, who: who, result: "deleted", detail: "version=\(record.version)")
                }
                reply(respond())
            case .failure(let error) where error.code == .unavailable:
                Log.warning("account \(id): change refused, Redis is unreachable: \(error.message)")
                Self.audit(request, who: who, result: "refused 503", detail: "")
                reply(
                    APIError(
                        .serviceUnavailable,
                        "account changes need the shared store (Redis), which is unreachable: nothing was changed; retry when it is back",
                        headers: [("Retry-After", "5")]
                    ).response)
            case .failure(let error) where error.code == .conflict:
                Self.audit(request, who: who, result: "refused 412", detail: "")
                reply(PolicyHandler.stale.response)
            case .failure(let error) where error.code == .unknownOutcome:
                Log.warning("account \(id): the connection to Redis broke with the change in flight: \(error.message)")
                Self.audit(request, who: who, result: "unknown 503", detail: "")
                let message =
                    "the connection to the shared store (Redis) broke with the change in flight: "
                    + "it may or may not have been made; read the account back (GET) before retrying"
                reply(APIError(.serviceUnavailable, message, headers: [("Retry-After", "5")]).response)
            case .failure(let error):
                Log.error("account \(id): \(error.message)")
                Self.audit(request, who: who, result: "refused 500", detail: "")
                reply(
                    APIError(
                        .internalError,
                        "the change is in the shared store (Redis) but this replica could not store it; it retries on the next message or reconnect"
                    ).response)
            }
        }
    }
}

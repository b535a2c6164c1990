import Foundation
import HTTPDNSCore
import HTTPDNSCrypto
import Synchronization

/// `GET` and `PUT /v1/{account}/policy` (docs/policy.md): the tenant's policy document
/// (`PolicyDocument`), with an `ETag` made from the document's text, so it is the same on every
/// replica. A `PUT` must name that tag in `If-Match` (428 without, 412 when the document has
/// changed since), changes the account's policy keys only, and is written exactly as an admin
/// change of the account is (`AdminHandler.write`: the store or Redis first, the reply once durable).
struct PolicyHandler: Sendable {
    let admin: AdminHandler
    /// Accounts whose policy is being written here: a second `PUT` meanwhile gets 412, since the
    /// tag it names is about to be stale.
    private let writing = Writing()

    /// The accounts of `writing`, behind a lock.
    private final class Writing: Sendable {
        private let locked_ids = Mutex<Set<String>>([])

        /// False when `id` is being written already.
        func begin(_ id: String) -> Bool { locked_ids.withLock { $0.insert(id).inserted } }

        func end(_ id: String) { _ = locked_ids.withLock { $0.remove(id) } }
    }

    init(admin: AdminHandler) {
        self.admin = admin
    }

    func get(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        .response(try Self.response(200, engine.config))
    }

    /// Replaces the account's policy with the body's document; see the type's summary. The tag
    /// is checked once this replica's earlier policy change of the account (if any) is done:
    /// against the configuration that change left.
    func put(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        let id = engine.accountID
        guard let condition = request.ifMatch else {
            throw APIError(
                .preconditionRequired, "a PUT of the policy needs If-Match with the ETag a GET of it gave, so that no change is lost")
        }
        guard writing.begin(id) else { throw Self.stale }
        let done: @Sendable () -> Void = { [writing] in writing.end(id) }
        // With replicas, the record held here (version and configuration together): Redis makes
        // the change only while it still holds that version, so an edit made meanwhile through
        // another replica, not yet seen here, is not lost either.
        let held = admin.state.replication.map { $0.held(id) }
        let existing = held??.config ?? engine.config
        let config: AccountConfig
        do throws(APIError) {
            guard Self.matches(condition, try Self.etag(existing)) else { throw Self.stale }
            do {
                config = try PolicyDocument.applying(request.body, to: existing)
            } catch {
                AdminHandler.audit(request, who: "tenant", result: "refused 400", detail: "")
                throw APIError(.invalidParameter, error.description)
            }
        } catch {
            done()
            throw error
        }
        return admin.write(
            id, config: config, existing: existing, request: request, who: "tenant", ifVersion: held.map { $0?.version ?? 0 },
            respond: { _, written in
                do throws(APIError) { return try Self.response(200, written) } catch { return error.response }
            }, finished: done)
    }

    static let stale = APIError(
        .preconditionFailed, "the policy has changed since the ETag in If-Match was given: GET it again, then PUT your change")

    /// The document of `config` with its `ETag`.
    private static func response(_ status: Int, _ config: AccountConfig) throws(APIError) -> HTTPResponse {
        let text = try document(config)
        return HTTPResponse(status: status, headers: [("ETag", try etag(text: text))], body: Array(text.utf8))
    }

    private static func document(_ config: AccountConfig) throws(APIError) -> String {
        do {
            return try PolicyDocument.text(of: config)
        } catch {
            Log.error("policy: \(error)")
            throw APIError(.internalError, "could not write the account's policy")
        }
    }

    /// The strong entity tag of `config`'s document: `"` + 32 hexadecimal digits of the SHA-256
    /// of its canonical text + `"`.
    static func etag(_ config: AccountConfig) throws(APIError) -> String { try etag(text: try document(config)) }

    private static func etag(text: String) throws(APIError) -> String {
        do {
            return "\"" + Digest.hex(Array(try Digest.sha256(Array(text.utf8)).prefix(16))) + "\""
        } catch {
            throw APIError(.internalError, "could not compute the policy's ETag")
        }
    }

    /// Whether `If-Match` (`*`, or a comma-separated list of entity tags) names `etag`, compared
    /// strongly (RFC 9110 §13.1.1: a weak tag `W/"…"` never matches).
    static func matches(_ condition: String, _ etag: String) -> Bool {
        let trimmed = condition.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" { return true }
        return trimmed.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
    }
}

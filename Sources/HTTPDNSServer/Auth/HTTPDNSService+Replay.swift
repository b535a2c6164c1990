import Dispatch
import HTTPDNSCore

extension HTTPDNSService {
    /// The replay step, then the handler. A signed change (`Route.isSignedChange`, made with a
    /// key) is accepted once: its signature is claimed first, in the replay memory every replica
    /// shares when Redis is configured (`Replication.claimSignature`), else in this process's
    /// (`ClientAuthenticator.checkReplay`). Nothing else takes the replay memory: not GETs, not
    /// RFC 8484 POSTs, not unsigned changes of an account that does not require signatures.
    /// The signature is the request's as received (an encrypted request's is outside `enc`).
    func runChange(_ route: Route, _ match: Route.Match) -> HandlerResult {
        guard route.isSignedChange, case .key(let keyID, _) = match.authentication, let engine = match.engine else {
            return route.run(handlers, match)
        }
        let signed = match.received?.request ?? match.request
        guard case .credentials(let credentials) = SignatureV1.presented(in: signed), let expiry = Timestamp(credentials.expiry) else {
            return route.run(handlers, match)
        }
        let change = SignedChange(
            account: engine.accountID, keyID: keyID, signature: credentials.signature, expiry: expiry,
            client: clients.address(of: signed))
        guard let replication else {
            if let refusal = authenticator.checkReplay(change) { return .response(route.format.response(refusal)) }
            return route.run(handlers, match)
        }
        return .deferred { [self] respond in
            replication.claimSignature(account: change.account, signature: change.signature, expiry: change.expiry) { [self] claimed in
                switch claimed {
                case .success(true):
                    // Off the Redis loop thread: a handler may evict a whole cache.
                    DispatchQueue.global(qos: .userInitiated).async { [self] in
                        switch route.run(handlers, match) {
                        case .response(let response): respond(response)
                        case .deferred(let start): start(respond)
                        }
                    }
                case .success(false):
                    respond(route.format.response(ClientAuthenticator.replayed))
                case .failure(let error):
                    Log.warning(
                        "account \(change.account): signed change refused, the shared replay check could not be made: \(error.message)")
                    respond(route.format.response(Self.sharedReplayUnavailable))
                }
            }
        }
    }

    /// Redis could not say whether a signed change's signature was used before: the change is
    /// not made (fail closed), on this replica or any.
    static let sharedReplayUnavailable = APIError(
        .serviceUnavailable,
        "signed changes are checked against replays in the shared store (Redis), which is unreachable: nothing was changed; sign the request again and retry when it is back",
        headers: [("Retry-After", "5")])
}

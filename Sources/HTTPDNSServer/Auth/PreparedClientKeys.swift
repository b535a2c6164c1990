import HTTPDNSCrypto
import Synchronization

/// The HMAC keys of client secrets, set up once (`HMACSHA256Key`) and shared by every request
/// signed with them. Keyed by the secret itself, so a rotated or changed key gets its own entry
/// and nothing must be invalidated; bounded: when `capacity` secrets are held, the table is
/// emptied and refilled by the requests that follow (keys change rarely).
final class PreparedClientKeys: Sendable {
    static let capacity = 4096
    private let locked_keys = Mutex<[String: HMACSHA256Key]>([:])

    /// The prepared key of `secret`, made on first use.
    func key(for secret: String) throws(CryptoError) -> HMACSHA256Key {
        if let known = locked_keys.withLock({ $0[secret] }) { return known }
        // Made outside the lock; two threads may both make one, and the first stored wins.
        let made = try HMACSHA256Key(Array(secret.utf8))
        return locked_keys.withLock { keys in
            if let known = keys[secret] { return known }
            if keys.count >= Self.capacity { keys.removeAll() }
            keys[secret] = made
            return made
        }
    }

    var count: Int { locked_keys.withLock { $0.count } }
}

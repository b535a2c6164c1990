import Foundation

/// Why a resolve failed.
public enum HTTPDNSClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A service refused the request (4xx): another service would refuse it too.
    case refused(status: Int, code: String, message: String)
    /// No service answered (each one's failure, in the order tried), and the system resolver
    /// was not asked or failed too (`system`).
    case unavailable(failures: [String], system: String?)
    /// A service answered with something that is not the v1 API's JSON.
    case badReply(String)
    /// The client encrypts (`encryptionKey`) and an answer did not open under the key, or came
    /// in clear with a success status: changed on the way, or not from the service asked. The
    /// other services were tried (each one's failure, in the order tried); the system resolver
    /// was not, since its plain DNS is what the encryption was to avoid.
    case unverifiedReply(failures: [String])
    /// The configuration cannot work (no service, a host list too long).
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .refused(let status, let code, let message): "service refused the request: \(status) \(code): \(message)"
        case .unavailable(let failures, let system):
            "no service answered (\(failures.joined(separator: "; ")))" + (system.map { "; system resolver: \($0)" } ?? "")
        case .badReply(let reason): "bad reply from the service: \(reason)"
        case .unverifiedReply(let failures):
            "no service answer could be verified (\(failures.joined(separator: "; "))); the system resolver was not asked"
        case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
        }
    }
}

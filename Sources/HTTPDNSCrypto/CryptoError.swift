import COpenSSL

/// A libcrypto call failed: which operation, and OpenSSL's own reason (`ERR_get_error`).
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var reason: String

    public init(_ operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "\(operation) failed: \(reason)" }

    /// The one place libcrypto results are checked: `success` false (a 0 length, a NULL, a
    /// result other than 1) becomes a `CryptoError` carrying OpenSSL's queued reason, and the
    /// queue is cleared so the next failure reports its own.
    static func check(_ success: Bool, _ operation: String) throws(CryptoError) {
        guard !success else { return }
        let code = ERR_get_error()
        ERR_clear_error()
        var buffer = [CChar](repeating: 0, count: 256)
        if code != 0 { ERR_error_string_n(code, &buffer, buffer.count) }
        let reason =
            code == 0
            ? "no reason given by libcrypto" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw CryptoError(operation, reason: reason)
    }
}

/// Why a Redis command gave no reply. Callers treat every code alike (go on without Redis); the
/// code is for metrics and logs. Never holds a password.
public struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        /// No reply within the connection's timeout (`redisTimeout`).
        public static let timeout = Code(name: "timeout")
        /// Not connected (waiting to reconnect): failed at once, nothing was sent.
        public static let unavailable = Code(name: "unavailable")
        /// The connection broke with the command sent or queued.
        public static let connectionLost = Code(name: "connection_lost")
        /// Redis answered with an error reply (`-ERR ...`).
        public static let server = Code(name: "server")
        /// hiredis refused the command (e.g. the context is closing) or a reply had the wrong shape.
        public static let client = Code(name: "client")
        /// Too many commands waiting on this connection: failed at once.
        public static let overloaded = Code(name: "overloaded")
        /// The connection was shut down.
        public static let shutdown = Code(name: "shutdown")

        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

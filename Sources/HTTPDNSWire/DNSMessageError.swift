/// Why a DNS message could not be read or written.
public struct DNSMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The bytes are not a DNS message libknot can parse (or a field in it is out of range).
        public static let malformed = Code("malformed")
        /// A well-formed message of the wrong kind: a reply where a query was expected, an opcode
        /// other than QUERY, not exactly one question.
        public static let unexpected = Code("unexpected")
        /// libknot failed for a reason other than the input (memory, space).
        public static let library = Code("library")

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The libknot result (`knot_error`, negative), when the error came from libknot.
    public var underlying: Int32?

    public init(_ code: Code, _ message: String, underlying: Int32? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(code): \(message)" }
}

/// A complete HTTP response received by the ``CurlEventLoop``.
public struct HTTPResponse: Sendable, Hashable {
    /// HTTP status code (200, 404, ...).
    public var status: Int
    /// Header fields of the final response, names lower-cased; a repeated field keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), e.g. `header("Date")`.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

import Foundation

/// One HTTP response as the test client received it.
public struct HTTPClientResponse: Sendable, CustomStringConvertible {
    /// Status code, e.g. 200.
    public var status: Int
    /// Header fields with lower-cased names, in arrival order.
    public var headers: [(name: String, value: String)]
    /// The body, de-chunked.
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON; `.null` when it is not JSON.
    public var json: TestJSON { (try? TestJSON(parsing: body)) ?? .null }

    public var description: String { "HTTP \(status) \(text)" }
}

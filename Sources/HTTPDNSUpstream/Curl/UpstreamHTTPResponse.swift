/// A complete HTTP response from an upstream, received by the ``CurlEventLoop`` for an
/// ``UpstreamHTTPRequest``. (The responses the service itself sends are HTTPDNSServer's `HTTPResponse`.)
public struct UpstreamHTTPResponse: Sendable, Hashable {
    /// HTTP status code (200, 404, ...).
    public var status: Int
    /// The final response's header lines as received (`Name: value` lines ending in CRLF, without
    /// the status line). Kept as bytes and read by ``header(_:)``: an upstream answer has a few
    /// fields and at most one is ever read, so parsing each into a dictionary on every transfer
    /// would be the larger part of the transfer's own cost.
    public var headerBlock: [UInt8]
    public var body: [UInt8]

    public init(status: Int, headerBlock: [UInt8] = [], body: [UInt8] = []) {
        self.status = status
        self.headerBlock = headerBlock
        self.body = body
    }

    /// The value of header field `name` (ASCII case-insensitive, e.g. `header("Date")`) without
    /// the whitespace around it; a repeated field gives its last value; nil when absent.
    public func header(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { wanted in
            headerBlock.withUnsafeBufferPointer { block in
                var found: String?
                var start = 0
                while start < block.count {
                    var end = start
                    while end < block.count && block[end] != UInt8(ascii: "\n") { end += 1 }
                    if let value = Self.value(of: wanted, line: UnsafeBufferPointer(rebasing: block[start..<end])) {
                        found = value
                    }
                    start = end + 1
                }
                return found
            }
        }
    }

    /// The value of `line` when it is the field `wanted` (`Name: value`), else nil.
    private static func value(of wanted: UnsafeBufferPointer<UInt8>, line: UnsafeBufferPointer<UInt8>) -> String? {
        guard line.count > wanted.count, line[wanted.count] == UInt8(ascii: ":") else { return nil }
        for index in 0..<wanted.count where lowercased(line[index]) != lowercased(wanted[index]) {
            return nil
        }
        var first = wanted.count + 1
        var end = line.count
        while first < end && isWhitespace(line[first]) { first += 1 }
        while end > first && isWhitespace(line[end - 1]) { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: line[first..<end]), as: UTF8.self)
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Optional whitespace (RFC 9110 section 5.6.3) and the line's CR.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}

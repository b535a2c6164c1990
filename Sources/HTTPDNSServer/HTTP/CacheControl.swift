/// `Cache-Control: max-age=N` (RFC 8484 §5.1: the smallest TTL of the message), written in this
/// one place for both paths: the general path's `HTTPResponse` header and the fast path's, which
/// `HTTPServer` hands to libmicrohttpd from the stack (no string, no array per hit).
enum CacheControl {
    static let name: StaticString = "Cache-Control"

    /// The longest value: "max-age=" and the ten digits of `UInt32.max`.
    private static let capacity = 18

    /// Gives `body` the header's value for `seconds` as a C string on the stack.
    static func withValue<R>(maxAge seconds: UInt32, _ body: (UnsafePointer<CChar>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity + 1) { buffer in
            var index = 0
            for character in "max-age=".utf8 {
                buffer[index] = CChar(bitPattern: character)
                index += 1
            }
            // The digits, written backwards from the end of the value, then moved up to it.
            var digits = 0
            var rest = seconds
            repeat {
                buffer[capacity - 1 - digits] = CChar(bitPattern: UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
                digits += 1
            } while rest > 0
            for offset in 0..<digits { buffer[index + offset] = buffer[capacity - digits + offset] }
            buffer[index + digits] = 0
            return body(UnsafePointer(buffer.baseAddress!))
        }
    }

    /// The header as the general path's `HTTPResponse` carries it.
    static func header(maxAge seconds: UInt32) -> (String, String) {
        (name.description, withValue(maxAge: seconds) { String(cString: $0) })
    }
}

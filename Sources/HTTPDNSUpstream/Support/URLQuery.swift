/// Builds URL query strings with RFC 3986 percent-encoding (only unreserved characters stay).
struct URLQuery {
    private(set) var items: [(String, String)] = []

    mutating func append(_ name: String, _ value: String) {
        items.append((name, value))
    }

    /// `name=value&...`, percent-encoded.
    var encoded: String {
        items.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
    }

    /// `base` with the query appended after `?` (or `&` when `base` already has a query).
    func url(base: String) -> String {
        guard !items.isEmpty else { return base }
        return base + (base.contains("?") ? "&" : "?") + encoded
    }

    static func escape(_ text: String) -> String {
        var output: [UInt8] = []
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// RFC 3986 percent-encoding, one way: the unreserved bytes (`A-Z a-z 0-9 - . _ ~`) stay, every
/// other byte of the UTF-8 becomes `%XX` with upper-case hex. Used for the query strings sent to
/// upstreams and for the canonical string of client signatures, which must agree byte for byte
/// with what clients compute (docs/security.md).
public enum PercentEncoding {
    /// `text` encoded; with `keepingSlash`, `/` stays too (for paths).
    public static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether `byte` is one of RFC 3986's unreserved characters.
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

/// base64url without padding (RFC 4648 §5), as RFC 8484 `GET ?dns=` wants. Written directly:
/// Foundation's base64 plus two `replacingOccurrences` went through NSString searches on every
/// upstream query (about 1 % of the process's time on misses).
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { output in
            var written = 0
            var index = 0
            while index < bytes.count {
                let first = UInt32(bytes[index])
                let second = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
                let third = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
                let group = first << 16 | second << 8 | third
                // 2, 3 or 4 characters for 1, 2 or 3 input bytes (no padding).
                let characters = min(4, (bytes.count - index) + 1)
                for position in 0..<characters {
                    output[written] = alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)]
                    written += 1
                }
                index += 3
            }
            return written
        }
    }
}

/// A Lua script run by its SHA-1 (`EVALSHA`), so that a call ships and hashes the digest instead
/// of the whole text. Redis keeps scripts in a cache that a restart or `SCRIPT FLUSH` empties;
/// ``RedisConnection/evaluate(_:keys:arguments:completion:)`` then sends the text once with
/// `EVAL`, which caches it again.
public struct RedisScript: Sendable {
    /// The Lua source, as `EVAL` sends it.
    public let text: String
    /// The lower-case hex SHA-1 of `text`: Redis' name for the script (`SCRIPT LOAD` answers it).
    public let sha1: String
    /// `text` and `sha1` as the command arguments they become, converted once.
    let textBytes: [UInt8]
    let sha1Bytes: [UInt8]

    public init(_ text: String) {
        self.text = text
        textBytes = Array(text.utf8)
        sha1Bytes = Self.hex(SHA1.digest(textBytes))
        sha1 = String(decoding: sha1Bytes, as: UTF8.self)
    }

    private static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}

import HTTPDNSCrypto

/// The EMAS HTTPDNS API's signature of `sign_d` and `sign_resolve`:
/// `s = hex(md5(hosts + "-" + secret + "-" + t))`, where `hosts` is the `host` argument as the
/// service reads it (percent-decoded, the comma-separated list exactly as sent) and `t` the
/// expiry in Unix seconds, as sent. Only the host list and the expiry are covered (`ip` and
/// `query` are not: that is the format existing clients speak).
enum EMASSignature {
    /// Lower-case hex, 32 characters.
    static func signature(hosts: String, secret: String, expiry: String) throws(CryptoError) -> String {
        Digest.hex(try Digest.md5(message(hosts: hosts.utf8, secret: secret, expiry: expiry.utf8)))
    }

    /// Whether `presented` (as sent; hex in either case) is the signature of `hosts` and `expiry`
    /// with `secret`, compared in constant time.
    static func matches(_ presented: String, hosts: String, secret: String, expiry: String) throws(CryptoError) -> Bool {
        let digest = try Digest.md5(message(hosts: hosts.utf8, secret: secret, expiry: expiry.utf8))
        return isHex(Array(presented.utf8), of: digest)
    }

    /// The same on the request's bytes (`SignedParts`), as the authentication step reads them.
    static func matches(
        _ presented: UnsafeRawBufferPointer, hosts: UnsafeRawBufferPointer, secret: String, expiry: UnsafeRawBufferPointer
    ) throws(CryptoError) -> Bool {
        isHex(presented, of: try Digest.md5(message(hosts: hosts, secret: secret, expiry: expiry)))
    }

    /// The bytes the digest is taken of, in one buffer.
    private static func message(hosts: some Collection<UInt8>, secret: String, expiry: some Collection<UInt8>) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(hosts.count + secret.utf8.count + expiry.count + 2)
        message.append(contentsOf: hosts)
        message.append(UInt8(ascii: "-"))
        message.append(contentsOf: secret.utf8)
        message.append(UInt8(ascii: "-"))
        message.append(contentsOf: expiry)
        return message
    }

    /// Whether `presented` is the hex of `digest` in either case, compared in time that depends
    /// on the lengths only (`CRYPTO_memcmp`). The same as comparing `presented.lowercased()` with
    /// the lower-case hex, on bytes: only ASCII letters are folded, and no other character
    /// lower-cases to a hex digit.
    private static func isHex(_ presented: some Collection<UInt8>, of digest: [UInt8]) -> Bool {
        guard presented.count == 2 * digest.count else { return false }
        return withUnsafeTemporaryAllocation(byteCount: 2 * presented.count, alignment: 1) { buffer in
            let expected = UnsafeMutableRawBufferPointer(rebasing: buffer[..<presented.count])
            let folded = UnsafeMutableRawBufferPointer(rebasing: buffer[presented.count...])
            digest.withUnsafeBytes { Digest.writeHex($0, to: expected.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
            for (index, byte) in presented.enumerated() {
                folded[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return Digest.constantTimeEquals(UnsafeRawBufferPointer(expected), UnsafeRawBufferPointer(folded))
        }
    }
}

import HTTPDNSCrypto

/// The EMAS HTTPDNS API's signature of `sign_d` and `sign_resolve`:
/// `s = hex(md5(hosts + "-" + secret + "-" + t))`, where `hosts` is the `host` argument as the
/// service reads it (percent-decoded, the comma-separated list exactly as sent) and `t` the
/// expiry in Unix seconds, as sent. Only the host list and the expiry are covered (`ip` and
/// `query` are not: that is the format existing clients speak).
enum EMASSignature {
    /// Lower-case hex, 32 characters.
    static func signature(hosts: String, secret: String, expiry: String) throws(CryptoError) -> String {
        try Digest.md5Hex(hosts + "-" + secret + "-" + expiry)
    }

    /// Whether `presented` (as sent; hex in either case) is the signature of `hosts` and `expiry`
    /// with `secret`, compared in constant time.
    static func matches(_ presented: String, hosts: String, secret: String, expiry: String) throws(CryptoError) -> Bool {
        let expected = try signature(hosts: hosts, secret: secret, expiry: expiry)
        return Digest.constantTimeEquals(Array(expected.utf8), Array(presented.lowercased().utf8))
    }
}

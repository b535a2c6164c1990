/// The Alibaba Public DNS request signature of the DoH JSON API (WIRE-FORMATS §1), in one place
/// for both sides: the `json` upstream client makes it (`DoHJSONSigner`), the service's
/// `/resolve` checks it. `key = lowercase_hex(sha256(uid + secret + ts + name + ak))`, a plain
/// concatenation of the values as sent (`ts` in Unix seconds, `name` as in `name=`).
public enum DoHJSONSignature {
    public static func key(uid: String, secret: String, timestamp: String, name: String, accessKeyID: String) throws(CryptoError) -> String
    {
        try Digest.sha256Hex(uid + secret + timestamp + name + accessKeyID)
    }
}

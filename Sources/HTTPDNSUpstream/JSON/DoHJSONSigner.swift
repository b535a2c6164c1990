import HTTPDNSCore
import HTTPDNSCrypto

/// Alibaba Public DNS request signing (WIRE-FORMATS §1):
/// `uid=ACCOUNT_ID&ak=ACCESS_KEY_ID&ts=UNIX_SECONDS&key=hex(sha256(uid + secret + ts + name + ak))`.
public struct DoHJSONSigner: Sendable, Hashable {
    public var accountID: String
    public var accessKeyId: String
    public var accessKeySecret: String

    public init(accountID: String, accessKeyId: String, accessKeySecret: String) {
        self.accountID = accountID
        self.accessKeyId = accessKeyId
        self.accessKeySecret = accessKeySecret
    }

    /// The lower-case hex SHA-256 `key` for `name` (as sent in `name=`) at Unix time `timestamp`.
    public func key(name: String, timestamp: Int) throws(CryptoError) -> String {
        try DoHJSONSignature.key(
            uid: accountID, secret: accessKeySecret, timestamp: String(timestamp), name: name, accessKeyID: accessKeyId)
    }

    /// Appends `uid`, `ak`, `ts` and `key` to `query`.
    func sign(_ query: inout URLQuery, name: String, timestamp: Int) throws(CryptoError) {
        let key = try key(name: name, timestamp: timestamp)
        query.append("uid", accountID)
        query.append("ak", accessKeyId)
        query.append("ts", String(timestamp))
        query.append("key", key)
    }
}

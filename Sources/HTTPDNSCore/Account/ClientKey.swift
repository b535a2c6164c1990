/// A key a client of the account signs its requests with (`clientKeys`): what httpdnsd checks
/// on requests it receives. Not to be confused with `accessKeyId`/`accessKeySecret`/`secretKey`,
/// the credentials httpdnsd itself uses towards its upstreams.
public struct ClientKey: Sendable, Equatable {
    /// What a key may do on its account's endpoints.
    public enum Role: String, Sendable, CaseIterable, Comparable {
        /// Resolve, and look up one host in the cache.
        case resolve
        /// Everything `resolve` may, plus listing and deleting the cache, preload, refresh, stats.
        case manage

        public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }

        private var rank: Int { self == .resolve ? 0 : 1 }

        /// Whether a key of this role may call a route that requires `required`.
        public func allows(_ required: Role) -> Bool { required <= self }
    }

    /// Names the key in a signature (`kid`): 1-64 letters, digits, `-`, `_` or `.`.
    public var id: String
    /// The HMAC key (its UTF-8 bytes): `secretLengths` characters (Unicode code points, as JSON
    /// Schema's `minLength`/`maxLength` count them, so the spec states the rule exactly; 16 code
    /// points are at least 16 bytes); `***` in every output.
    public var secret: String
    public var role: Role

    public init(id: String, secret: String, role: Role) {
        self.id = id
        self.secret = secret
        self.role = role
    }

    /// How many characters (code points) a secret has.
    public static let secretLengths = 16...256

    /// Whether `id` is 1-64 letters, digits, `-`, `_` or `.` (it travels in URLs and headers).
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    /// Reads the `clientKeys` list. With `allowingRedacted`, a secret may be `***` (the stand-in an
    /// admin GET shows): it is kept as such here, and `AccountConfig.keepingSecrets(of:)` replaces it
    /// with the stored one.
    static func list(_ value: Any, key: String, allowingRedacted: Bool) throws(ConfigError) -> [ClientKey] {
        guard let items = value as? [Any] else { throw ConfigError(key: key, "must be a list of {\"id\",\"secret\",\"role\"} objects") }
        var keys: [ClientKey] = []
        var seen: Set<String> = []
        for (index, item) in items.enumerated() {
            let path = "\(key)[\(index)]"
            guard let object = item as? [String: Any] else {
                throw ConfigError(key: path, "must be an object {\"id\",\"secret\",\"role\"}")
            }
            let reader = JSONObjectReader(object, path: path)
            try reader.checkKeys(["id", "secret", "role"])
            guard let id = try reader.string("id") else { throw ConfigError(key: "\(path).id", "is required") }
            guard isValidID(id) else { throw ConfigError(key: "\(path).id", "must be 1-64 letters, digits, '-', '_' or '.'") }
            guard seen.insert(id).inserted else { throw ConfigError(key: "\(path).id", "'\(id)' is given twice") }
            guard let secret = try reader.string("secret") else { throw ConfigError(key: "\(path).secret", "is required") }
            if !(allowingRedacted && secret == AccountConfig.redactedSecret) {
                guard secretLengths.contains(secret.unicodeScalars.count) else {
                    throw ConfigError(
                        key: "\(path).secret",
                        "must be \(secretLengths.lowerBound)-\(secretLengths.upperBound) characters, got \(secret.unicodeScalars.count)")
                }
            }
            guard let roleText = try reader.string("role") else { throw ConfigError(key: "\(path).role", "is required") }
            guard let role = Role(rawValue: roleText) else {
                throw ConfigError(key: "\(path).role", "must be resolve or manage, got '\(roleText)'")
            }
            keys.append(ClientKey(id: id, secret: secret, role: role))
        }
        return keys
    }

    /// The key as a JSON object; with `redacted`, the secret is `***`.
    func jsonObject(redacted: Bool) -> [String: Any] {
        ["id": id, "secret": redacted ? AccountConfig.redactedSecret : secret, "role": role.rawValue]
    }
}

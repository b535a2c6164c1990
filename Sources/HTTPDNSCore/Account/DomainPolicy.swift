/// Which names an account resolves (the account key `domains`): every name (`mode` `any`, the
/// default) or only those `allow` matches (`listed`); a name `deny` matches is refused in either
/// mode. A pattern is an exact name (`www.example.com`) or a wildcard (`*.example.com`: every
/// name below example.com, not example.com itself). Matching hashes the name and each of its
/// parent suffixes (`DomainNameSet`): its cost grows with the name's labels, not the lists.
public struct DomainPolicy: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Every name not denied.
        case any
        /// Only the names `allow` matches, and not denied.
        case listed
    }

    public private(set) var mode: Mode
    /// The patterns in canonical form (lower case, no trailing dot), as given.
    public private(set) var allow: [String]
    public private(set) var deny: [String]
    private let allowed: DomainPatterns
    private let denied: DomainPatterns

    /// `any` with no `deny`: every name, today's behaviour.
    public init() {
        self.init(unchecked: .any, allow: [], deny: [])
    }

    private init(unchecked mode: Mode, allow: [String], deny: [String]) {
        self.mode = mode
        self.allow = allow
        self.deny = deny
        allowed = DomainPatterns(allow)
        denied = DomainPatterns(deny)
    }

    /// A policy from its parts; throws naming `key.allow[i]` (or `deny`) for a pattern that is
    /// neither a host name nor `*.` and one, and `key.allow` for a `listed` policy that allows
    /// nothing.
    public init(mode: Mode, allow: [String], deny: [String], key: String = "domains") throws(ConfigError) {
        let allow = try DomainPatterns.canonical(allow, key: "\(key).allow")
        let deny = try DomainPatterns.canonical(deny, key: "\(key).deny")
        if mode == .listed && allow.isEmpty {
            throw ConfigError(key: "\(key).allow", "is empty and mode is listed: no name could be resolved")
        }
        self.init(unchecked: mode, allow: allow, deny: deny)
    }

    /// The default: nothing is refused, and a hit checks nothing (`LookupOptions.hasDomainPolicy`).
    public var isUnrestricted: Bool { mode == .any && deny.isEmpty }

    /// Whether a name (a request's bytes, any ASCII case, one trailing dot allowed) may be
    /// resolved. Allocates nothing.
    public func allows(_ name: UnsafeRawBufferPointer) -> Bool {
        if !denied.isEmpty && denied.matches(name) { return false }
        return mode == .any || allowed.matches(name)
    }

    public func allows(_ host: HostName) -> Bool {
        var name = host.value
        return name.withUTF8 { allows(UnsafeRawBufferPointer($0)) }
    }

    public static func == (lhs: DomainPolicy, rhs: DomainPolicy) -> Bool {
        lhs.mode == rhs.mode && lhs.allow == rhs.allow && lhs.deny == rhs.deny
    }

    /// Reads the `domains` object: `mode` (`any` or `listed`), `allow` and `deny` (arrays of
    /// patterns); keys left out keep `base`'s values.
    static func read(_ object: [String: Any], base: DomainPolicy, path: String) throws(ConfigError) -> DomainPolicy {
        let reader = JSONObjectReader(object, path: path)
        try reader.checkKeys(["mode", "allow", "deny"])
        var mode = base.mode
        if let text = try reader.string("mode") {
            guard let value = Mode(rawValue: text) else {
                throw ConfigError(key: reader.keyPath("mode"), "must be any or listed, got '\(Log.escaped(text))'")
            }
            mode = value
        }
        let allow = try reader.strings("allow") ?? base.allow
        let deny = try reader.strings("deny") ?? base.deny
        return try DomainPolicy(mode: mode, allow: allow, deny: deny, key: path)
    }

    /// `{"mode":..,"allow":[..],"deny":[..]}`.
    var jsonObject: [String: Any] {
        ["mode": mode.rawValue, "allow": allow, "deny": deny]
    }
}

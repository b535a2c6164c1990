import Foundation

/// How an account caches some of its names (the account key `hostOverrides`): a list of rules,
/// each naming hosts by pattern (`DomainPatterns`: exact or `*.` wildcard) and what applies to
/// their answers: `ttl` (the TTL they are cached and answered with, whatever the upstream said
/// and in place of `minCacheTTL`/`maxCacheTTL`; a negative answer's TTL is capped by it too),
/// `cache: false` (never cached, persisted or shared: every request asks the upstreams, with
/// single flight), `maxStaleAge` (how long past expiry they may be served stale, in place of the
/// account's). The first rule whose hosts match a name applies, top down (a rule that sets
/// nothing keeps its names out of the rules below it); a name no rule matches follows the
/// account's settings. Read on a miss and when an expired entry is found,
/// never on a fresh hit.
public struct HostOverrides: Sendable, Equatable {
    /// One rule.
    public struct Rule: Sendable, Equatable {
        /// The patterns in canonical form, as given.
        public var hosts: [String]
        public var ttl: UInt32?
        public var cache = true
        public var maxStaleAge: Double?

        public init(hosts: [String], ttl: UInt32? = nil, cache: Bool = true, maxStaleAge: Double? = nil) {
            self.hosts = hosts
            self.ttl = ttl
            self.cache = cache
            self.maxStaleAge = maxStaleAge
        }
    }

    public private(set) var rules: [Rule] = []
    private var patterns: [DomainPatterns] = []

    public init() {}

    /// The rules, each rule's hosts checked (throws naming `key[i].hosts[j]`).
    public init(_ rules: [Rule], key: String = "hostOverrides") throws(ConfigError) {
        guard rules.count <= Self.maximumRules else {
            throw ConfigError(key: key, "holds \(rules.count) rules; at most \(Self.maximumRules)")
        }
        for (index, rule) in rules.enumerated() {
            var rule = rule
            guard !rule.hosts.isEmpty else { throw ConfigError(key: "\(key)[\(index)].hosts", "names no host") }
            rule.hosts = try DomainPatterns.canonical(rule.hosts, key: "\(key)[\(index)].hosts")
            self.rules.append(rule)
            patterns.append(DomainPatterns(rule.hosts))
        }
    }

    public var isEmpty: Bool { rules.isEmpty }

    /// The first rule that matches `host`, nil when none does.
    public func rule(for host: HostName) -> Rule? {
        guard !rules.isEmpty else { return nil }
        var name = host.value
        return name.withUTF8 { bytes in
            patterns.indices.first { patterns[$0].matches(UnsafeRawBufferPointer(bytes)) }.map { rules[$0] }
        }
    }

    public static func == (lhs: HostOverrides, rhs: HostOverrides) -> Bool { lhs.rules == rhs.rules }

    /// The most rules one account may hold (each is matched in turn on a miss).
    public static let maximumRules = 1000

    /// Reads the `hostOverrides` array: objects with `hosts` (required), `ttl`, `cache`, `maxStaleAge`.
    static func read(_ value: Any, path: String) throws(ConfigError) -> HostOverrides {
        guard let array = value as? [Any] else { throw ConfigError(key: path, "must be an array of objects") }
        var rules: [Rule] = []
        for (index, element) in array.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard let object = element as? [String: Any] else { throw ConfigError(key: elementPath, "must be a JSON object") }
            let reader = JSONObjectReader(object, path: elementPath)
            try reader.checkKeys(["hosts", "ttl", "cache", "maxStaleAge"])
            guard let hosts = try reader.strings("hosts") else { throw ConfigError(key: reader.keyPath("hosts"), "is required") }
            var rule = Rule(hosts: hosts)
            if let ttl = try reader.int("ttl", range: 0...604_800) { rule.ttl = UInt32(ttl) }
            if let cache = try reader.bool("cache") { rule.cache = cache }
            rule.maxStaleAge = try reader.double("maxStaleAge", range: 0...31_536_000)
            rules.append(rule)
        }
        return try HostOverrides(rules, key: path)
    }

    /// The rules as JSON, each with the keys it sets.
    var jsonObject: [[String: Any]] {
        rules.map { rule in
            var object: [String: Any] = ["hosts": rule.hosts]
            if let ttl = rule.ttl { object["ttl"] = Int(ttl) }
            if !rule.cache { object["cache"] = false }
            if let age = rule.maxStaleAge { object["maxStaleAge"] = age }
            return object
        }
    }
}

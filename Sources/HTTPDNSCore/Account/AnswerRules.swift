import Synchronization

/// What a request tells the rules about its client: its address (the one the service derives:
/// `client_ip`/`ip`, trusted `X-Forwarded-For`, the peer, an RFC 8484 query's Client Subnet),
/// its `sdns-NAME` arguments (by NAME), and what the geo and ASN databases say of the address.
public struct RuleClient: Sendable {
    public var address: IPAddress?
    public var params: [String: String]
    public var geo: GeoRecord?

    public init(address: IPAddress?, params: [String: String] = [:], geo: GeoRecord? = nil) {
        self.address = address
        self.params = params
        self.geo = geo
    }
}

/// What the service's MaxMind-format databases say of an address.
public struct GeoRecord: Sendable, Equatable {
    /// ISO 3166-1 alpha-2, upper case.
    public var country: String?
    /// ISO 3166-2 (`CN-ZJ`), upper case: the subdivisions the city database names.
    public var regions: [String]
    public var asn: UInt32?

    public init(country: String? = nil, regions: [String] = [], asn: UInt32? = nil) {
        self.country = country
        self.regions = regions
        self.asn = asn
    }
}

/// An account's custom answers (the account key `rules`, docs/rules.md), indexed by host: exact
/// names in a hash, wildcards by their parent suffix, so finding a host's rules costs a hash
/// lookup per label of the name, whatever the count of rules. A name's rules are tried in the
/// order they are written; the first whose `when` holds answers.
public struct AnswerRules: Sendable, Equatable {
    public private(set) var rules: [AnswerRule] = []
    /// Every host pattern of every rule: the test a cache hit runs on the request's bytes.
    private var patterns = DomainPatterns()
    /// Exact name → indices of the rules naming it; wildcard parent (`example.com` for
    /// `*.example.com`) → indices of the rules naming it.
    private var exact: [String: [Int]] = [:]
    private var below: [String: [Int]] = [:]

    public init() {}

    /// The rules, checked (each rule's own checks are done by `AnswerRule.read`): at most
    /// `maximumRules`, names unique.
    public init(_ rules: [AnswerRule], key: String = "rules") throws(ConfigError) {
        guard rules.count <= Self.maximumRules else {
            throw ConfigError(key: key, "holds \(rules.count) rules; at most \(Self.maximumRules)")
        }
        var names: [String: Int] = [:]
        for (index, rule) in rules.enumerated() {
            if let first = names[rule.name] {
                throw ConfigError(key: "\(key)[\(index)].name", "'\(rule.name)' is the name of rules[\(first)] too: names must differ")
            }
            names[rule.name] = index
            for host in rule.hosts {
                if host.hasPrefix(DomainPatterns.wildcardPrefix) {
                    below[String(host.dropFirst(2)), default: []].append(index)
                } else {
                    exact[host, default: []].append(index)
                }
            }
        }
        self.rules = rules
        patterns = DomainPatterns(rules.flatMap(\.hosts))
    }

    public var isEmpty: Bool { rules.isEmpty }

    public static func == (lhs: AnswerRules, rhs: AnswerRules) -> Bool { lhs.rules == rhs.rules }

    /// The most rules one account may hold.
    public static let maximumRules = 1000

    /// Whether some rule names `name` (a request's bytes, any ASCII case, one trailing dot
    /// allowed). Allocates nothing.
    public func covers(_ name: UnsafeRawBufferPointer) -> Bool { patterns.matches(name) }

    /// The indices of the rules naming `host`, in the order they are written.
    public func candidates(for host: HostName) -> [Int] {
        guard !rules.isEmpty else { return [] }
        var found = exact[host.value] ?? []
        var name = Substring(host.value)
        while let dot = name.firstIndex(of: ".") {
            name = name[name.index(after: dot)...]
            if let indices = below[String(name)] { found += indices }
        }
        return found.count > 1 ? Array(Set(found)).sorted() : found
    }

    /// The first rule naming `host` whose conditions `client` meets; nil when none does.
    public func firstMatch(host: HostName, client: RuleClient) -> AnswerRule? {
        for index in candidates(for: host) where rules[index].when.holds(for: client) { return rules[index] }
        return nil
    }

    /// Each rule naming `host`, in order, with what its conditions said of `client`, up to and
    /// including the first that matched (the one that answers).
    public func explain(host: HostName, client: RuleClient) -> [(rule: AnswerRule, matched: Bool, reason: String)] {
        var result: [(rule: AnswerRule, matched: Bool, reason: String)] = []
        for index in candidates(for: host) {
            let (matched, reason) = rules[index].when.explain(for: client)
            result.append((rules[index], matched, reason))
            if matched { break }
        }
        return result
    }

    /// Reads the `rules` array.
    static func read(_ value: Any, path: String) throws(ConfigError) -> AnswerRules {
        guard let array = value as? [Any] else { throw ConfigError(key: path, "must be an array of rule objects") }
        guard array.count <= maximumRules else { throw ConfigError(key: path, "holds \(array.count) rules; at most \(maximumRules)") }
        var rules: [AnswerRule] = []
        rules.reserveCapacity(array.count)
        for (index, element) in array.enumerated() { rules.append(try AnswerRule.read(element, path: "\(path)[\(index)]")) }
        return try AnswerRules(rules, key: path)
    }

    var jsonObject: [[String: Any]] { rules.map(\.jsonObject) }
}

extension AnswerRule.Conditions {
    /// Whether `client` meets every condition given (any value of a list may match).
    public func holds(for client: RuleClient) -> Bool {
        failure(for: client) == nil
    }

    /// The first condition `client` fails, by its key; nil when every one holds.
    func failure(for client: RuleClient) -> String? {
        if !networks.isEmpty {
            guard let address = client.address, networks.contains(where: { $0.contains(address) }) else { return "networks" }
        }
        for param in params {
            guard let value = client.params[param.name], param.patterns.contains(where: { Glob.matches($0, value) }) else {
                return "params.\(param.name)"
            }
        }
        if !countries.isEmpty {
            guard let country = client.geo?.country, countries.contains(country) else { return "countries" }
        }
        if !regions.isEmpty {
            guard let found = client.geo?.regions, found.contains(where: regions.contains) else { return "regions" }
        }
        if !asns.isEmpty {
            guard let asn = client.geo?.asn, asns.contains(asn) else { return "asns" }
        }
        return nil
    }

    /// Whether the conditions hold, and why: the condition that failed and what the client had,
    /// or the conditions that held.
    func explain(for client: RuleClient) -> (matched: Bool, reason: String) {
        let address = client.address?.description ?? "no address"
        if let failed = failure(for: client) {
            let had: String
            switch failed {
            case "networks": had = "client \(address) is in none of \(networks.map(\.description).joined(separator: ", "))"
            case "countries": had = "country \(client.geo?.country ?? "unknown") is none of \(countries.joined(separator: ", "))"
            case "regions":
                had =
                    "regions \(client.geo.map { $0.regions.joined(separator: ",") } ?? "unknown") are none of \(regions.joined(separator: ", "))"
            case "asns":
                had = "AS \(client.geo?.asn.map(String.init) ?? "unknown") is none of \(asns.map(String.init).joined(separator: ", "))"
            default:
                let name = String(failed.dropFirst("params.".count))
                let value = client.params[name].map { "'\($0)'" } ?? "absent"
                let patterns = params.first { $0.name == name }?.patterns.map { "'\($0)'" }.joined(separator: ", ") ?? ""
                had = "sdns-\(name) \(value) matches none of \(patterns)"
            }
            return (false, "\(failed) failed: \(had)")
        }
        var held: [String] = []
        if !networks.isEmpty { held.append("networks (client \(address))") }
        held += params.map { "params.\($0.name) ('\(client.params[$0.name] ?? "")')" }
        if !countries.isEmpty { held.append("countries (\(client.geo?.country ?? ""))") }
        if !regions.isEmpty { held.append("regions") }
        if !asns.isEmpty { held.append("asns (AS \(client.geo?.asn.map(String.init) ?? ""))") }
        return (true, held.isEmpty ? "no conditions: matches every request" : "held: " + held.joined(separator: ", "))
    }
}

/// `*` globs of `params` conditions: `*` stands for any run of characters (none included); every
/// other character stands for itself.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.utf8), text = Array(text.utf8)
        var p = 0, t = 0
        var star = -1, resume = 0
        while t < text.count {
            if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
                star = p
                resume = t
                p += 1
            } else if p < pattern.count && pattern[p] == text[t] {
                p += 1
                t += 1
            } else if star >= 0 {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}

extension AnswerRule.Answer {
    /// The addresses of `family` in the order of one response: drawn one by one, without
    /// replacement, each with a chance proportional to its weight (`weights`); the given order
    /// when there are no weights. `usable` leaves out addresses a health check found dead, unless
    /// it would leave none.
    public func ordered<Random: RandomNumberGenerator>(
        _ family: RecordFamily, using random: inout Random, usable: (IPAddress) -> Bool = { _ in true }
    ) -> [IPAddress] {
        let all = addresses(family)
        var candidates = all.indices.filter { usable(all[$0]) }
        if candidates.isEmpty { candidates = Array(all.indices) }
        guard !weights.isEmpty, candidates.count > 1 else { return candidates.map { all[$0] } }
        var result: [IPAddress] = []
        result.reserveCapacity(candidates.count)
        var total = candidates.reduce(UInt64(0)) { $0 + UInt64(weights[$1]) }
        while !candidates.isEmpty {
            var draw = random.next(upperBound: total)
            var chosen = 0
            while draw >= UInt64(weights[candidates[chosen]]) {
                draw -= UInt64(weights[candidates[chosen]])
                chosen += 1
            }
            let index = candidates.remove(at: chosen)
            total -= UInt64(weights[index])
            result.append(all[index])
        }
        return result
    }
}

/// The random source of weighted answers: SplitMix64 over an atomic counter, so every HTTP
/// thread draws without a lock or a system call.
public struct RuleRandom: RandomNumberGenerator, Sendable {
    private static let state = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    public init() {}

    public mutating func next() -> UInt64 {
        var z = Self.state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

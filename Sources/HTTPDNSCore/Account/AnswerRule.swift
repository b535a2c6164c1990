import Foundation

/// One custom answer of an account (an element of the account key `rules`, docs/rules.md): the
/// hosts it answers (exact names and `*.` wildcards), the conditions a request must meet
/// (`when`: every condition given must hold, any value of one list may match), and the answer
/// it gives (`answer`, with `extra`, a text EMAS and v1 answers carry).
public struct AnswerRule: Sendable, Equatable {
    /// `when`: what a request must meet. An empty value matches every request.
    public struct Conditions: Sendable, Equatable {
        /// The client's address lies in one of them.
        public var networks: [CIDR] = []
        /// `sdns-NAME` arguments whose value matches one of the globs (`*`: any run of characters).
        public var params: [Param] = []
        /// The client's country (ISO 3166-1 alpha-2, upper case), from the service's `geoDatabase`.
        public var countries: [String] = []
        /// The client's region (ISO 3166-2, `CN-ZJ`), from the service's `geoDatabase`.
        public var regions: [String] = []
        /// The client's autonomous system, from the service's `asnDatabase`.
        public var asns: [UInt32] = []

        public init() {}

        /// Whether any condition needs a lookup in the geo or ASN database.
        public var needsGeo: Bool { !countries.isEmpty || !regions.isEmpty || !asns.isEmpty }
    }

    /// One `params` condition: the argument `sdns-<name>` matches one of `patterns`.
    public struct Param: Sendable, Equatable {
        public var name: String
        public var patterns: [String]

        public init(name: String, patterns: [String]) {
            self.name = name
            self.patterns = patterns
        }
    }

    /// `answer`: the addresses of each family, their weights, the TTL and the health check.
    public struct Answer: Sendable, Equatable {
        public var ipv4: [IPAddress] = []
        public var ipv6: [IPAddress] = []
        /// `weights[i]` weighs the i-th address of each family; empty: every address weighs 1.
        public var weights: [UInt32] = []
        public var ttl: UInt32 = AnswerRule.defaultTTL
        /// The TCP port a health check connects to; nil: no health check.
        public var healthCheckPort: UInt16?

        public init() {}

        public func addresses(_ family: RecordFamily) -> [IPAddress] { family == .a ? ipv4 : ipv6 }
    }

    public var name: String
    /// The patterns in canonical form (`DomainPatterns.canonical`).
    public var hosts: [String]
    public var when = Conditions()
    public var answer = Answer()
    public var extra: String?

    public init(name: String, hosts: [String]) {
        self.name = name
        self.hosts = hosts
    }

    public static let defaultTTL: UInt32 = 60
    public static let maximumHosts = 100
    public static let maximumConditionValues = 256
    public static let maximumParams = 16
    public static let maximumPatternCharacters = 128
    public static let maximumAddresses = 32
    public static let maximumNameBytes = 64
    public static let maximumExtraCharacters = 1024
    public static let conditionKeys: Set<String> = ["networks", "params", "countries", "regions", "asns"]

    /// Whether `name` may name a rule: 1-64 of `A-Z a-z 0-9 . _ -` (it is a label on the ops listener).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumNameBytes && name.utf8.allSatisfy(isNameByte)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    // MARK: Reading

    /// Reads one element of `rules`; `path` is `rules[i]` with its prefix.
    static func read(_ element: Any, path: String) throws(ConfigError) -> AnswerRule {
        guard let object = element as? [String: Any] else { throw ConfigError(key: path, "must be a JSON object") }
        let reader = JSONObjectReader(object, path: path)
        try reader.checkKeys(["name", "hosts", "when", "answer", "extra"])
        guard let name = try reader.string("name") else { throw ConfigError(key: reader.keyPath("name"), "is required") }
        guard isValidName(name) else {
            throw ConfigError(
                key: reader.keyPath("name"),
                "'\(Log.escaped(name))' is not a rule name: 1 to \(maximumNameBytes) of A-Z, a-z, 0-9, '.', '_', '-'")
        }
        guard let hosts = try reader.strings("hosts") else { throw ConfigError(key: reader.keyPath("hosts"), "is required") }
        guard !hosts.isEmpty else { throw ConfigError(key: reader.keyPath("hosts"), "names no host") }
        guard hosts.count <= maximumHosts else {
            throw ConfigError(key: reader.keyPath("hosts"), "holds \(hosts.count) patterns; at most \(maximumHosts)")
        }
        var rule = AnswerRule(name: name, hosts: try DomainPatterns.canonical(hosts, key: reader.keyPath("hosts")))
        if let when = try reader.object("when") { rule.when = try readConditions(when, path: reader.keyPath("when")) }
        guard let answer = try reader.object("answer") else { throw ConfigError(key: reader.keyPath("answer"), "is required") }
        rule.answer = try readAnswer(answer, path: reader.keyPath("answer"))
        if let extra = try reader.string("extra") {
            guard extra.unicodeScalars.count <= maximumExtraCharacters,
                !extra.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw ConfigError(
                    key: reader.keyPath("extra"), "must be at most \(maximumExtraCharacters) characters without control characters")
            }
            rule.extra = extra
        }
        return rule
    }

    private static func readConditions(_ object: [String: Any], path: String) throws(ConfigError) -> Conditions {
        let reader = JSONObjectReader(object, path: path)
        if let unknown = object.keys.sorted().first(where: { !conditionKeys.contains($0) }) {
            throw ConfigError(
                key: reader.keyPath(unknown), "is not a condition (conditions: \(conditionKeys.sorted().joined(separator: ", ")))")
        }
        try reader.checkKeys(conditionKeys)
        var conditions = Conditions()
        if let list = try reader.strings("networks") {
            let key = reader.keyPath("networks")
            try checkCount(list.count, key: key)
            conditions.networks = try list.enumerated().map { index, text throws(ConfigError) in
                guard let network = CIDR(text) else {
                    throw ConfigError(
                        key: "\(key)[\(index)]",
                        "'\(Log.escaped(text))' is not a network (10.0.0.0/8, 2001:db8::/32; host bits zero)")
                }
                return network
            }
        }
        if let params = try reader.object("params") { conditions.params = try readParams(params, path: reader.keyPath("params")) }
        if let list = try reader.strings("countries") {
            conditions.countries = try checkedCodes(list, key: reader.keyPath("countries"), isValid: isCountryCode, form: "CN, US")
        }
        if let list = try reader.strings("regions") {
            conditions.regions = try checkedCodes(list, key: reader.keyPath("regions"), isValid: isRegionCode, form: "CN-ZJ, US-CA")
        }
        if let value = object["asns"] {
            let key = reader.keyPath("asns")
            guard let array = value as? [Any] else { throw ConfigError(key: key, "must be an array of AS numbers") }
            try checkCount(array.count, key: key)
            conditions.asns = try array.enumerated().map { index, element throws(ConfigError) in
                guard let number = element as? NSNumber, String(cString: number.objCType) != "c",
                    let asn = UInt32(exactly: number.doubleValue), asn > 0
                else { throw ConfigError(key: "\(key)[\(index)]", "must be an AS number between 1 and 4294967295") }
                return asn
            }
        }
        return conditions
    }

    private static func readParams(_ object: [String: Any], path: String) throws(ConfigError) -> [Param] {
        guard object.count <= maximumParams else {
            throw ConfigError(key: path, "names \(object.count) arguments; at most \(maximumParams)")
        }
        var params: [Param] = []
        for name in object.keys.sorted() {
            let key = "\(path).\(name)"
            guard isValidName(name), name.utf8.count <= 32 else {
                throw ConfigError(key: key, "is not an argument name: 1 to 32 of A-Z, a-z, 0-9, '.', '_', '-' (sent as sdns-NAME)")
            }
            let patterns: [String]
            if let text = object[name] as? String {
                patterns = [text]
            } else if let list = object[name] as? [Any], !list.isEmpty, list.count <= maximumConditionValues {
                patterns = try list.enumerated().map { index, element throws(ConfigError) in
                    guard let text = element as? String else { throw ConfigError(key: "\(key)[\(index)]", "must be a string") }
                    return text
                }
            } else {
                throw ConfigError(key: key, "must be a pattern or a non-empty array of at most \(maximumConditionValues) patterns")
            }
            for pattern in patterns
            where pattern.unicodeScalars.count > maximumPatternCharacters || pattern.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                throw ConfigError(
                    key: key, "'\(Log.escaped(pattern))' must be at most \(maximumPatternCharacters) characters without control characters")
            }
            params.append(Param(name: name, patterns: patterns))
        }
        return params
    }

    private static func readAnswer(_ object: [String: Any], path: String) throws(ConfigError) -> Answer {
        let reader = JSONObjectReader(object, path: path)
        try reader.checkKeys(["ipv4", "ipv6", "weights", "ttl", "healthCheck"])
        var answer = Answer()
        answer.ipv4 = try addresses(reader, "ipv4", family: .a)
        answer.ipv6 = try addresses(reader, "ipv6", family: .aaaa)
        guard !answer.ipv4.isEmpty || !answer.ipv6.isEmpty else {
            throw ConfigError(key: path, "is empty: give ipv4 or ipv6 addresses")
        }
        if let value = object["weights"] {
            let key = reader.keyPath("weights")
            guard let array = value as? [Any] else { throw ConfigError(key: key, "must be an array of whole numbers") }
            let longest = max(answer.ipv4.count, answer.ipv6.count)
            guard array.count == longest else {
                throw ConfigError(
                    key: key, "has \(array.count) weights for \(longest) addresses: one weight per address of the longer list")
            }
            answer.weights = try array.enumerated().map { index, element throws(ConfigError) in
                guard let number = element as? NSNumber, String(cString: number.objCType) != "c",
                    let weight = UInt32(exactly: number.doubleValue), weight >= 1, weight <= 1_000_000
                else { throw ConfigError(key: "\(key)[\(index)]", "must be a whole number between 1 and 1000000") }
                return weight
            }
        }
        if let ttl = try reader.int("ttl", range: 1...86_400) { answer.ttl = UInt32(ttl) }
        if let check = try reader.object("healthCheck") {
            let checkReader = JSONObjectReader(check, path: reader.keyPath("healthCheck"))
            try checkReader.checkKeys(["port"])
            guard let port = try checkReader.int("port", range: 1...65_535) else {
                throw ConfigError(key: checkReader.keyPath("port"), "is required")
            }
            answer.healthCheckPort = UInt16(port)
        }
        return answer
    }

    private static func addresses(_ reader: JSONObjectReader, _ key: String, family: RecordFamily) throws(ConfigError) -> [IPAddress] {
        guard let list = try reader.strings(key) else { return [] }
        guard list.count <= maximumAddresses else {
            throw ConfigError(key: reader.keyPath(key), "holds \(list.count) addresses; at most \(maximumAddresses)")
        }
        return try list.enumerated().map { index, text throws(ConfigError) in
            guard let address = IPAddress(text), address.family == family else {
                throw ConfigError(key: "\(reader.keyPath(key))[\(index)]", "'\(Log.escaped(text))' is not an \(key) address")
            }
            return address
        }
    }

    private static func checkCount(_ count: Int, key: String) throws(ConfigError) {
        guard count > 0 else { throw ConfigError(key: key, "is empty: leave the condition out to match every request") }
        guard count <= maximumConditionValues else {
            throw ConfigError(key: key, "holds \(count) values; at most \(maximumConditionValues)")
        }
    }

    private static func checkedCodes(
        _ list: [String], key: String, isValid: (String) -> Bool, form: String
    ) throws(ConfigError) -> [String] {
        try checkCount(list.count, key: key)
        for (index, text) in list.enumerated() where !isValid(text.uppercased()) {
            throw ConfigError(key: "\(key)[\(index)]", "'\(Log.escaped(text))' is not a code of that kind (\(form))")
        }
        return list.map { $0.uppercased() }
    }

    static func isCountryCode(_ text: String) -> Bool {
        text.utf8.count == 2 && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    static func isRegionCode(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, isCountryCode(String(parts[0])), (1...3).contains(parts[1].utf8.count) else { return false }
        return parts[1].utf8.allSatisfy {
            ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
        }
    }

    // MARK: Writing

    /// The rule as JSON, as it is read.
    var jsonObject: [String: Any] {
        var object: [String: Any] = ["name": name, "hosts": hosts]
        var conditions: [String: Any] = [:]
        if !when.networks.isEmpty { conditions["networks"] = when.networks.map(\.description) }
        if !when.params.isEmpty {
            conditions["params"] = Dictionary(
                uniqueKeysWithValues: when.params.map { ($0.name, $0.patterns.count == 1 ? $0.patterns[0] as Any : $0.patterns) })
        }
        if !when.countries.isEmpty { conditions["countries"] = when.countries }
        if !when.regions.isEmpty { conditions["regions"] = when.regions }
        if !when.asns.isEmpty { conditions["asns"] = when.asns.map { Int($0) } }
        if !conditions.isEmpty { object["when"] = conditions }
        var answerObject: [String: Any] = ["ttl": Int(answer.ttl)]
        if !answer.ipv4.isEmpty { answerObject["ipv4"] = answer.ipv4.map(\.description) }
        if !answer.ipv6.isEmpty { answerObject["ipv6"] = answer.ipv6.map(\.description) }
        if !answer.weights.isEmpty { answerObject["weights"] = answer.weights.map { Int($0) } }
        if let port = answer.healthCheckPort { answerObject["healthCheck"] = ["port": Int(port)] }
        object["answer"] = answerObject
        if let extra { object["extra"] = extra }
        return object
    }
}

/// A list of host name patterns, matched without allocating: exact names (`www.example.com`) and
/// wildcards (`*.example.com`: every name below example.com, not example.com itself). Matching
/// hashes the name and each of its parent suffixes (`DomainNameSet`): its cost grows with the
/// name's labels, not the list. The account's `domains` lists and `hostOverrides` use it.
struct DomainPatterns: Sendable {
    private var exact = DomainNameSet()
    private var parents = DomainNameSet()

    init() {}

    /// The patterns, each in canonical form (`canonical`).
    init(_ patterns: [String]) {
        var exact: [HostName] = []
        var parents: [HostName] = []
        for pattern in patterns {
            if pattern.hasPrefix(Self.wildcardPrefix) {
                parents.append(HostName(pattern.dropFirst(2))!)
            } else {
                exact.append(HostName(pattern)!)
            }
        }
        self.exact = DomainNameSet(exact)
        self.parents = DomainNameSet(parents)
    }

    var isEmpty: Bool { exact.count == 0 && parents.count == 0 }

    /// Whether a name (a request's bytes, any ASCII case, one trailing dot allowed) matches.
    func matches(_ name: UnsafeRawBufferPointer) -> Bool {
        exact.contains(name) || parents.containsParent(of: name)
    }

    /// The most patterns one list may hold.
    static let maximumPatterns = 100_000

    static let wildcardPrefix = "*."

    /// Each pattern in canonical form (lower case, no trailing dot), checked: throws naming
    /// `key[i]` for one that is neither a host name nor `*.` and one.
    static func canonical(_ patterns: [String], key: String) throws(ConfigError) -> [String] {
        guard patterns.count <= maximumPatterns else {
            throw ConfigError(key: key, "holds \(patterns.count) patterns; at most \(maximumPatterns)")
        }
        var result: [String] = []
        result.reserveCapacity(patterns.count)
        for (index, text) in patterns.enumerated() {
            let wildcard = text.hasPrefix(wildcardPrefix)
            guard let host = HostName(wildcard ? text.dropFirst(2) : Substring(text)) else {
                throw ConfigError(
                    key: "\(key)[\(index)]",
                    "'\(Log.escaped(text))' is not a host name or a wildcard of one (www.example.com, *.example.com)")
            }
            result.append(wildcard ? wildcardPrefix + host.value : host.value)
        }
        return result
    }
}

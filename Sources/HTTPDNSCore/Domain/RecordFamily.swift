/// The address family of a cached answer: A (IPv4) or AAAA (IPv6), numbered as DNS types.
public enum RecordFamily: UInt16, Sendable, Hashable, CaseIterable, Comparable {
    case a = 1
    case aaaa = 28

    public var typeName: String { self == .a ? "A" : "AAAA" }

    public static func < (lhs: RecordFamily, rhs: RecordFamily) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What a client asked for with `type=`.
public enum QueryType: String, Sendable, CaseIterable {
    case a = "A"
    case aaaa = "AAAA"
    /// The families the account enables: A, plus AAAA when `ipv6Enable` is on.
    case auto
    /// A and AAAA regardless of the account's `ipv6Enable`.
    case both

    /// Parses `A`, `AAAA`, `auto`, `both` (case-insensitive) and the numbers 1 and 28.
    public init?(parameter: String) {
        switch parameter.lowercased() {
        case "a", "1", "4": self = .a
        case "aaaa", "28", "6": self = .aaaa
        case "auto", "": self = .auto
        case "both", "4,6", "a,aaaa": self = .both
        default: return nil
        }
    }

    /// The families to resolve for this query under an account with `ipv6Enabled`.
    /// The one family asked, or nil when two are (no array: the request path asks this first).
    public func singleFamily(ipv6Enabled: Bool) -> RecordFamily? {
        switch self {
        case .a: .a
        case .aaaa: .aaaa
        case .auto: ipv6Enabled ? nil : .a
        case .both: nil
        }
    }

    public func families(ipv6Enabled: Bool) -> [RecordFamily] {
        switch self {
        case .a: [.a]
        case .aaaa: [.aaaa]
        case .auto: ipv6Enabled ? [.a, .aaaa] : [.a]
        case .both: [.a, .aaaa]
        }
    }
}

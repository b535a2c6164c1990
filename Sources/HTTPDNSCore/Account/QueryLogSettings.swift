/// An account's query log (the account key `queryLog`): whether its name lookups are logged,
/// which share of them (`sampleRate`), how long entries are kept (`retention`, seconds) and how
/// much of a client's address is kept (`clientPrefixV4`, `clientPrefixV6`: the network, never
/// the full address). Off by default.
public struct QueryLogSettings: Sendable, Equatable {
    public var enabled = false
    /// The share of lookups logged, 0-1 (1: every lookup).
    public var sampleRate = 1.0
    /// Seconds an entry is kept.
    public var retention = 86_400
    /// Bits kept of an IPv4 client address.
    public var clientPrefixV4 = 24
    /// Bits kept of an IPv6 client address.
    public var clientPrefixV6 = 56

    public init() {}

    /// The keys of the `queryLog` object.
    static let keys: Set<String> = ["enabled", "sampleRate", "retention", "clientPrefixV4", "clientPrefixV6"]

    /// Reads the `queryLog` object; keys left out keep `base`'s values. Errors name the key
    /// (`accounts.shop.queryLog.sampleRate: must be between 0.0 and 1.0, got 2.0`).
    static func read(_ object: [String: Any], base: QueryLogSettings, path: String) throws(ConfigError) -> QueryLogSettings {
        let reader = JSONObjectReader(object, path: path)
        try reader.checkKeys(keys)
        var settings = base
        if let value = try reader.bool("enabled") { settings.enabled = value }
        if let value = try reader.double("sampleRate", range: 0...1) { settings.sampleRate = value }
        if let value = try reader.int("retention", range: 1...31_536_000) { settings.retention = value }
        if let value = try reader.int("clientPrefixV4", range: 0...32) { settings.clientPrefixV4 = value }
        if let value = try reader.int("clientPrefixV6", range: 0...128) { settings.clientPrefixV6 = value }
        return settings
    }

    /// `{"enabled":..,"sampleRate":..,"retention":..,"clientPrefixV4":..,"clientPrefixV6":..}`.
    var jsonObject: [String: Any] {
        [
            "enabled": enabled, "sampleRate": sampleRate, "retention": retention, "clientPrefixV4": clientPrefixV4,
            "clientPrefixV6": clientPrefixV6,
        ]
    }

    /// The network of `address` with the account's prefixes, in canonical text
    /// (`198.51.100.0/24`, `2001:db8:1200::/56`); an IPv4-mapped IPv6 address counts as IPv4.
    public func maskedClient(_ address: IPAddress) -> String {
        Self.masked(address, v4: clientPrefixV4, v6: clientPrefixV6)
    }

    /// `address`'s network with `v4` or `v6` bits kept, as `maskedClient` writes it.
    static func masked(_ address: IPAddress, v4: Int, v6: Int) -> String {
        let address = address.mappedIPv4 ?? address
        let prefix = address.family == .a ? v4 : v6
        let network = IPAddress(family: address.family, bytes: CIDR.masked(address.bytes, to: prefix)) ?? address
        return "\(network)/\(prefix)"
    }
}

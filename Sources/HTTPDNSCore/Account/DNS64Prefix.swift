/// The IPv6 prefix an account synthesizes AAAA answers under (the account key `dns64Prefix`,
/// DNS64 as RFC 6147 describes it): an AAAA question for a name that has A records but no AAAA
/// is answered with each IPv4 address embedded in the prefix, as RFC 6052 §2.2 lays it out for
/// the prefix's length (32, 40, 48, 56, 64 or 96 bits: the IPv4 address fills the bits after
/// the prefix, skipping bits 64-71, the "u" octet, which stays zero; for /96 it is the last 32
/// bits). The well-known prefix is `64:ff9b::/96` (RFC 6052 §2.1).
public struct DNS64Prefix: Sendable, Equatable, CustomStringConvertible {
    /// The prefix's 16 bytes (bits after `length` zero).
    public let network: IPAddress
    /// 32, 40, 48, 56, 64 or 96.
    public let length: Int

    /// The lengths RFC 6052 §2.2 defines.
    public static let lengths: Set<Int> = [32, 40, 48, 56, 64, 96]

    /// Parses `ADDRESS/LENGTH` (`64:ff9b::/96`); nil for anything but an IPv6 prefix of one of
    /// `lengths` with its host bits and its "u" octet (bits 64-71) zero.
    public init?(_ text: String) {
        guard text.contains("/"), let cidr = CIDR(text), cidr.network.family == .aaaa, Self.lengths.contains(cidr.prefixLength),
            cidr.network.byte(8) == 0
        else { return nil }
        network = cidr.network
        length = cidr.prefixLength
    }

    /// `64:ff9b::/96`.
    public var description: String { "\(network)/\(length)" }

    /// The IPv6 address that embeds the IPv4 address `ipv4` (first octet in the high byte).
    public func embedding(_ ipv4: UInt32) -> IPAddress {
        var bytes = network.bytes
        var index = length / 8
        for shift in stride(from: 24, through: 0, by: -8) {
            // Bits 64-71 are the "u" octet: the IPv4 address continues after it (RFC 6052 §2.2).
            if index == 8 { index += 1 }
            bytes[index] = UInt8(truncatingIfNeeded: ipv4 >> UInt32(shift))
            index += 1
        }
        return IPAddress(family: .aaaa, bytes: bytes)!
    }

    /// The AAAA answer DNS64 gives for a name whose AAAA answer is `aaaa` and whose A answer is
    /// `a`: `a`'s addresses embedded under the prefix, marked `synthesized`, when `aaaa` has no
    /// address and the name exists (NODATA) and `a` has addresses; else nil (the AAAA answer
    /// stands). The TTL is `a`'s, capped as RFC 6147 §5.1.7 asks by the MINIMUM of the SOA the
    /// negative AAAA answer carried, or by 600 seconds when it carried none.
    public func synthesized(aaaa: ResolvedAnswer, a: ResolvedAnswer) -> ResolvedAnswer? {
        guard aaaa.addressList.isEmpty, !aaaa.nxdomain, !a.addressList.isEmpty else { return nil }
        let addresses = a.addressList.strings.compactMap { text -> String? in
            guard let number = AddressList.canonicalIPv4(text) ?? IPAddress(text).flatMap(Self.number) else { return nil }
            return embedding(number).description
        }
        guard !addresses.isEmpty else { return nil }
        let cap = aaaa.soa?.minimum ?? Self.ttlWithoutSOA
        var answer = ResolvedAnswer(
            addresses: addresses, ttl: min(a.ttl, cap), originTTL: min(a.originTTL, cap), source: a.source, stale: a.stale)
        answer.synthesized = true
        return answer
    }

    /// The cap on a synthesized answer's TTL when the negative AAAA answer had no SOA (RFC 6147 §5.1.7).
    public static let ttlWithoutSOA: UInt32 = 600

    private static func number(_ address: IPAddress) -> UInt32? {
        guard address.family == .a else { return nil }
        return UInt32(address.byte(0)) << 24 | UInt32(address.byte(1)) << 16 | UInt32(address.byte(2)) << 8 | UInt32(address.byte(3))
    }

    /// Reads the `dns64Prefix` value; throws naming `key` for anything `init(_:)` refuses.
    static func read(_ text: String, key: String) throws(ConfigError) -> DNS64Prefix {
        guard let prefix = DNS64Prefix(text) else {
            throw ConfigError(
                key: key,
                "'\(Log.escaped(text))' is not an IPv6 prefix of length 32, 40, 48, 56, 64 or 96 with bits 64-71 zero (RFC 6052; e.g. 64:ff9b::/96)"
            )
        }
        return prefix
    }
}

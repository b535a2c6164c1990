/// An IPv4 or IPv6 network in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`); a plain address is
/// a host route (`/32`, `/128`). Used for the trusted-proxy list.
///
/// Host bits must be zero (`10.1.0.0/8` is refused: it is most likely a typo). An IPv4-mapped
/// IPv6 network with a prefix of 96 or more (`::ffff:10.0.0.0/104`) is stored as the IPv4
/// network it maps (`10.0.0.0/8`), and `contains` treats IPv4-mapped addresses as IPv4, so a
/// dual-stack listener that sees `::ffff:10.1.2.3` still matches `10.0.0.0/8`.
public struct CIDR: Hashable, Sendable, CustomStringConvertible {
    /// The network address (host bits zero).
    public let network: IPAddress
    /// 0-32 for IPv4, 0-128 for IPv6.
    public let prefixLength: Int

    /// Parses `ADDRESS` or `ADDRESS/PREFIX`; nil when the text is not that, the prefix is out of
    /// range for the family, or host bits are set.
    public init?(_ text: some StringProtocol) {
        let addressText: Substring
        var prefix: Int?
        if let slash = text.firstIndex(of: "/") {
            addressText = Substring(text[..<slash])
            let digits = text[text.index(after: slash)...]
            guard !digits.isEmpty, digits.utf8.count <= 3,
                digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let value = Int(digits)
            else { return nil }
            prefix = value
        } else {
            addressText = Substring(text)
        }
        guard let parsed = IPAddress(String(addressText)) else { return nil }
        var address = parsed
        var length = prefix ?? (parsed.family == .a ? 32 : 128)
        guard length <= parsed.count * 8 else { return nil }
        if let mapped = parsed.mappedIPv4, length >= 96 {
            address = mapped
            length -= 96
        }
        guard Self.masked(address.bytes, to: length) == address.bytes else { return nil }
        network = address
        prefixLength = length
    }

    /// True when `address` lies in this network (an IPv4-mapped IPv6 address counts as IPv4).
    public func contains(_ address: IPAddress) -> Bool {
        let candidate = address.mappedIPv4 ?? address
        guard candidate.family == network.family else { return false }
        let whole = prefixLength / 8
        let rest = prefixLength % 8
        for index in 0..<whole where candidate.byte(index) != network.byte(index) { return false }
        guard rest != 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
        return candidate.byte(whole) & mask == network.byte(whole)
    }

    /// `10.0.0.0/8`, `::1/128`.
    public var description: String { "\(network)/\(prefixLength)" }

    /// `bytes` with every bit after the first `prefixLength` cleared.
    static func masked(_ bytes: [UInt8], to prefixLength: Int) -> [UInt8] {
        var result = bytes
        for index in result.indices {
            let kept = prefixLength - index * 8
            if kept <= 0 {
                result[index] = 0
            } else if kept < 8 {
                result[index] &= UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
            }
        }
        return result
    }
}

extension IPAddress {
    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) stands for; nil for
    /// every other address.
    public var mappedIPv4: IPAddress? {
        guard family == .aaaa, byte(10) == 0xFF, byte(11) == 0xFF, (0..<10).allSatisfy({ byte($0) == 0 }) else { return nil }
        return withUnsafeBytes { IPAddress(family: .a, rawBytes: UnsafeRawBufferPointer(rebasing: $0[12..<16])) }
    }
}

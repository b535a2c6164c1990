#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A textual IPv4 or IPv6 address, checked and normalised with `inet_pton`/`inet_ntop`.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let family: RecordFamily
    /// 4 or 16 bytes in network order.
    public let bytes: [UInt8]

    public init?(_ text: String) {
        // `inet_pton` reads a C string: a NUL would end the text early.
        guard !text.utf8.contains(0) else { return nil }
        if text.contains(":") {
            var storage = in6_addr()
            guard inet_pton(AF_INET6, text, &storage) == 1 else { return nil }
            family = .aaaa
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        } else {
            var storage = in_addr()
            guard inet_pton(AF_INET, text, &storage) == 1 else { return nil }
            family = .a
            bytes = withUnsafeBytes(of: &storage) { Array($0) }
        }
    }

    public init?(family: RecordFamily, bytes: [UInt8]) {
        guard bytes.count == (family == .a ? 4 : 16) else { return nil }
        self.family = family
        self.bytes = bytes
    }

    /// The canonical text form (`::1`, `192.0.2.1`). IPv4 is written digit by digit by
    /// `AddressList.dottedQuad` (EMAS answers echo the client's address on every hit, and
    /// `inet_ntop` formats it through `sprintf`: about 2 700 instructions with its array); IPv6
    /// by `inet_ntop`, whose compression of zero groups (RFC 5952) is not repeated here.
    public var description: String {
        if family == .a {
            return AddressList.dottedQuad(UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { buffer in
            let text = bytes.withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, buffer.baseAddress, socklen_t(buffer.count)) }
            // Fails only for an unknown family or a buffer too small, neither of which is possible here.
            precondition(text != nil, "inet_ntop failed for 16 bytes and INET6_ADDRSTRLEN")
            return String(cString: buffer.baseAddress!)
        }
    }
}

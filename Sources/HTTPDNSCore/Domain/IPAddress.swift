#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A textual IPv4 or IPv6 address, checked and normalised with `inet_pton`/`inet_ntop`.
///
/// The bytes are kept inline, not in an array: an address is made on every request that names
/// a client (EMAS echoes the peer's, `ispEnable` accounts look hits up by the client's
/// network), and making one allocates nothing.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let family: RecordFamily
    /// The 4 or 16 bytes in network order, left-aligned (zero after an IPv4 address).
    private let storage: (UInt64, UInt64)

    public init?(_ text: String) {
        // `inet_pton` reads a C string: a NUL would end the text early.
        guard !text.utf8.contains(0) else { return nil }
        let family: RecordFamily = text.utf8.contains(UInt8(ascii: ":")) ? .aaaa : .a
        var storage: (UInt64, UInt64) = (0, 0)
        // `withCString`: a short string passed as `const char *` would be copied into a new array.
        let parsed = text.withCString { text in
            withUnsafeMutableBytes(of: &storage) { inet_pton(family == .a ? AF_INET : AF_INET6, text, $0.baseAddress) }
        }
        guard parsed == 1 else { return nil }
        self.family = family
        self.storage = storage
    }

    public init?(family: RecordFamily, bytes: [UInt8]) {
        guard let address = bytes.withUnsafeBytes({ IPAddress(family: family, rawBytes: $0) }) else { return nil }
        self = address
    }

    /// From exactly 4 (IPv4) or 16 (IPv6) bytes in network order, copied; nil for another count.
    public init?(family: RecordFamily, rawBytes: UnsafeRawBufferPointer) {
        guard rawBytes.count == (family == .a ? 4 : 16) else { return nil }
        var storage: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: rawBytes) }
        self.family = family
        self.storage = storage
    }

    /// An IPv4 address as a number, first octet in the high byte (`AddressList`'s packed form);
    /// nil for IPv6.
    public var ipv4: UInt32? {
        guard family == .a else { return nil }
        return UInt32(bigEndian: Swift.withUnsafeBytes(of: storage) { $0.load(as: UInt32.self) })
    }

    /// 4 or 16.
    public var count: Int { family == .a ? 4 : 16 }

    /// The 4 or 16 bytes in network order, in a new array (`byte(_:)` and `withUnsafeBytes` read
    /// them in place).
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Byte `index` (0 ..< `count`) in network order.
    public func byte(_ index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "IPAddress: byte \(index) of \(count)")
        return Swift.withUnsafeBytes(of: storage) { $0[index] }
    }

    /// Calls `body` with the 4 or 16 bytes in network order.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    public static func == (lhs: IPAddress, rhs: IPAddress) -> Bool {
        lhs.family == rhs.family && lhs.storage.0 == rhs.storage.0 && lhs.storage.1 == rhs.storage.1
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(storage.0)
        hasher.combine(storage.1)
    }

    /// The canonical text form (`::1`, `192.0.2.1`). IPv4 is written digit by digit by
    /// `AddressList.dottedQuad` (EMAS answers echo the client's address on every hit, and
    /// `inet_ntop` formats it through `sprintf`: about 2 700 instructions with its array); IPv6
    /// by `inet_ntop`, whose compression of zero groups (RFC 5952) is not repeated here.
    public var description: String {
        if let number = ipv4 { return AddressList.dottedQuad(number) }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { buffer in
            let text = withUnsafeBytes { inet_ntop(AF_INET6, $0.baseAddress, buffer.baseAddress, socklen_t(buffer.count)) }
            // Fails only for an unknown family or a buffer too small, neither of which is possible here.
            precondition(text != nil, "inet_ntop failed for 16 bytes and INET6_ADDRSTRLEN")
            return String(cString: buffer.baseAddress!)
        }
    }
}

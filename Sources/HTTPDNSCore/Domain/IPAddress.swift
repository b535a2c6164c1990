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

    /// The canonical text form (`::1`, `192.0.2.1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let domain = family == .a ? AF_INET : AF_INET6
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(domain, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

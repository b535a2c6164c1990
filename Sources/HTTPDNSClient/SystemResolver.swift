import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resolves a name without the service, as the last resort.
public protocol HTTPDNSSystemResolver: Sendable {
    /// The name's addresses (IPv4 and IPv6 as text); throws when there are none.
    func resolve(_ host: String) async throws -> [String]
}

/// `getaddrinfo`, run on a thread of its own so that the caller's thread (and the Swift
/// concurrency pool) never blocks on it.
public struct GetAddrInfoResolver: HTTPDNSSystemResolver {
    public init() {}

    public func resolve(_ host: String) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try Self.lookUp(host) }) }
            thread.start()
        }
    }

    /// The blocking lookup: every distinct address, in getaddrinfo's order.
    static func lookUp(_ host: String) throws -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPDNSClientError.badReply("getaddrinfo \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let text = numericHost(entry.pointee), !addresses.contains(text) { addresses.append(text) }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    private static func numericHost(_ info: addrinfo) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = getnameinfo(info.ai_addr, info.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
        guard status == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

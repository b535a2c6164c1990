import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#endif

/// A complete request without a body, borrowed: its bytes are valid only during the call that
/// received it. The fast path (`HTTPServer`'s `fastHandler`) reads requests through this, so a
/// request it answers builds no `HTTPRequest` (no strings, no argument buffer).
public protocol RequestHead {
    /// The method, e.g. `GET`.
    var method: UnsafeRawBufferPointer { get }
    /// The path without the query string, percent-decoded (as `HTTPRequest.path`).
    var path: UnsafeRawBufferPointer { get }
    /// The TCP peer, nil when unknown (read only when a client rate limit applies).
    var peerAddress: PeerAddress? { get }
    /// The first values of four query arguments, in the order asked, read together. For each:
    /// the first value of that name (names compare exactly), the empty value for a name given
    /// without `=`, nil when there is none: what `QueryArguments` gives.
    func arguments(
        _ first: StaticString, _ second: StaticString, _ third: StaticString, _ fourth: StaticString
    ) -> RequestHeadArguments
}

/// What `RequestHead.arguments` found for each of its four names.
public typealias RequestHeadArguments = (
    UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?
)

/// The request head of a libmicrohttpd connection inside its access callback.
public struct ConnectionHead: RequestHead {
    let connection: OpaquePointer
    public let method: UnsafeRawBufferPointer
    public let path: UnsafeRawBufferPointer

    init(connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>) {
        self.connection = connection
        self.method = UnsafeRawBufferPointer(start: method, count: strlen(method))
        self.path = UnsafeRawBufferPointer(start: url, count: strlen(url))
    }

    /// `MHD_CONNECTION_INFO_CLIENT_ADDRESS`, copied without an allocation.
    public var peerAddress: PeerAddress? { chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init) }

    /// One pass over libmicrohttpd's arguments (`MHD_get_connection_values`) for all four names:
    /// the resolve fast path reads four, and each pass walks the headers too.
    public func arguments(
        _ first: StaticString, _ second: StaticString, _ third: StaticString, _ fourth: StaticString
    ) -> RequestHeadArguments {
        var search = (Wanted(first), Wanted(second), Wanted(third), Wanted(fourth))
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let search = cls.assumingMemoryBound(to: (Wanted, Wanted, Wanted, Wanted).self)
            let length = strlen(key)
            search.pointee.0.offer(key, length: length, value: value)
            search.pointee.1.offer(key, length: length, value: value)
            search.pointee.2.offer(key, length: length, value: value)
            search.pointee.3.offer(key, length: length, value: value)
            return .YES
        }
        _ = withUnsafeMutablePointer(to: &search) { pointer in
            MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
        }
        return (search.0.found, search.1.found, search.2.found, search.3.found)
    }
}

/// One argument name `ConnectionHead.arguments` looks for, and the first value it found.
private struct Wanted {
    let name: StaticString
    private var seen = false
    private var value: UnsafePointer<CChar>?

    init(_ name: StaticString) { self.name = name }

    /// Takes `value` if `key` (of `length` bytes) is the name and none was taken before.
    mutating func offer(_ key: UnsafePointer<CChar>, length: Int, value: UnsafePointer<CChar>?) {
        guard !seen, length == name.utf8CodeUnitCount, memcmp(key, name.utf8Start, length) == 0 else { return }
        seen = true
        self.value = value
    }

    /// The value as `RequestHead` gives it: nil when the name never came.
    var found: UnsafeRawBufferPointer? {
        guard seen else { return nil }
        guard let value else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: value, count: strlen(value))
    }
}

extension UnsafeRawBufferPointer {
    /// True when these bytes are exactly `literal`'s (one `memcmp`: the fast path compares
    /// names this way, not through generic sequence comparison).
    func equals(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        return count == 0 || memcmp(baseAddress!, literal.utf8Start, count) == 0
    }
}

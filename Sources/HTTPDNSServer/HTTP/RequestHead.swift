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
    /// The first values of five query arguments, in the order asked, read together. For each:
    /// the first value of that name (names compare exactly, values are the decoded bytes with
    /// their length, `%00` included), the empty value for a name given without `=`, nil when
    /// there is none: what `QueryArguments` gives. Nil for them all when any other argument's
    /// name or value holds a control character (`DecodedArgument`), which the full path refuses.
    /// The first name's value is not checked: the caller must refuse what it cannot take.
    func arguments(
        _ first: StaticString, _ second: StaticString, _ third: StaticString, _ fourth: StaticString, _ fifth: StaticString
    ) -> RequestHeadArguments?
    /// The request as the general path builds it (everything copied; no body, listener `.main`:
    /// the fast path serves the main listeners only), for the steps of the general pipeline the
    /// fast path runs on accounts with client keys or an `aesSecretKey`.
    func request() -> HTTPRequest
}

/// What `RequestHead.arguments` found for each of its five names.
public typealias RequestHeadArguments = (
    UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?
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

    public func request() -> HTTPRequest {
        HTTPRequest(
            connection: connection, method: String(decoding: method, as: UTF8.self), path: String(decoding: path, as: UTF8.self),
            body: [], listener: .main)
    }

    /// `MHD_CONNECTION_INFO_CLIENT_ADDRESS`, copied without an allocation.
    public var peerAddress: PeerAddress? { chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init) }

    /// One pass over libmicrohttpd's arguments (`MHD_get_connection_values_n`, which gives the
    /// decoded lengths) for all five names: the resolve fast path reads five, and each pass walks
    /// the headers too.
    public func arguments(
        _ first: StaticString, _ second: StaticString, _ third: StaticString, _ fourth: StaticString, _ fifth: StaticString
    ) -> RequestHeadArguments? {
        var search = Search(wanted: (Wanted(first), Wanted(second), Wanted(third), Wanted(fourth), Wanted(fifth)))
        let iterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
            guard let cls, let key else { return .YES }
            let search = cls.assumingMemoryBound(to: Search.self)
            let name = UnsafeRawBufferPointer(start: key, count: keySize)
            let value = value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) }
            // The first name's value is the caller's to check; every other byte is checked here.
            if search.pointee.wanted.0.offer(name, value: value) { return .YES }
            _ = search.pointee.wanted.1.offer(name, value: value) || search.pointee.wanted.2.offer(name, value: value)
                || search.pointee.wanted.3.offer(name, value: value) || search.pointee.wanted.4.offer(name, value: value)
            if !DecodedArgument.isAcceptable(name) || value.map({ !DecodedArgument.isAcceptable($0) }) == true {
                search.pointee.refused = true
            }
            return .YES
        }
        _ = withUnsafeMutablePointer(to: &search) { pointer in
            MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
        }
        guard !search.refused else { return nil }
        return (search.wanted.0.found, search.wanted.1.found, search.wanted.2.found, search.wanted.3.found, search.wanted.4.found)
    }
}

/// What `ConnectionHead.arguments` looks for and found.
private struct Search {
    var wanted: (Wanted, Wanted, Wanted, Wanted, Wanted)
    /// Some argument other than the first wanted value held a control character or invalid UTF-8.
    var refused = false
}

/// One argument name `ConnectionHead.arguments` looks for, and the first value it found.
private struct Wanted {
    let name: StaticString
    private var seen = false
    private var value: UnsafeRawBufferPointer?

    init(_ name: StaticString) { self.name = name }

    /// Takes `value` if `key` is the name and none was taken before; true when taken.
    mutating func offer(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) -> Bool {
        guard !seen, key.equals(name) else { return false }
        seen = true
        self.value = value
        return true
    }

    /// The value as `RequestHead` gives it: nil when the name never came.
    var found: UnsafeRawBufferPointer? {
        guard seen else { return nil }
        return value ?? UnsafeRawBufferPointer(start: nil, count: 0)
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

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
    /// The first value of query argument `name` (names compare exactly), the empty value for a
    /// name given without `=`, nil when there is none: what `QueryArguments` gives.
    func argument(_ name: StaticString) -> UnsafeRawBufferPointer?
}

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

    public func argument(_ name: StaticString) -> UnsafeRawBufferPointer? {
        /// What the iterator looks for and what it found.
        struct Search {
            let name: StaticString
            var found = false
            var value: UnsafePointer<CChar>?
        }
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let search = cls.assumingMemoryBound(to: Search.self)
            let name = search.pointee.name
            guard strlen(key) == name.utf8CodeUnitCount, memcmp(key, name.utf8Start, name.utf8CodeUnitCount) == 0 else {
                return .YES
            }
            search.pointee.found = true
            search.pointee.value = value
            return .NO  // the first value counts
        }
        var search = Search(name: name)
        _ = withUnsafeMutablePointer(to: &search) { pointer in
            MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
        }
        guard search.found else { return nil }
        guard let value = search.value else { return UnsafeRawBufferPointer(start: nil, count: 0) }
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

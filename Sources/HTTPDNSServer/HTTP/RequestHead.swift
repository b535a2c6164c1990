import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#endif

/// A complete request without a body, borrowed: its bytes are valid only during the call that
/// received it. The fast path (`HTTPServer`'s `fastHandler`) reads requests through this, so a
/// request it answers builds no `HTTPRequest` (no strings, no argument buffer); a signed one's
/// signature, and the encryption step's decision on it, are checked on it too (`SignedRequest`).
public protocol RequestHead: SignedRequest {
    /// The method, e.g. `GET`.
    var method: UnsafeRawBufferPointer { get }
    /// The path without the query string, percent-decoded (as `HTTPRequest.path`).
    var path: UnsafeRawBufferPointer { get }
    /// The TCP peer, nil when unknown (read only when a client rate limit applies).
    var peerAddress: PeerAddress? { get }
    /// The first values of the query arguments `names` asks for, read in one pass. For each:
    /// the first value of that name (names compare exactly, values are the decoded bytes with
    /// their length, `%00` included), the empty value for a name given without `=`, nil when
    /// there is none: what `QueryArguments` gives; and how many arguments have none of the
    /// names (`RequestArguments.others`). Nil for them all when any other argument's name or
    /// value holds a control character or invalid UTF-8 (`DecodedArgument`), which the full path refuses. The
    /// first name's value is not checked: the caller must refuse what it cannot take.
    func arguments(_ names: ArgumentNames) -> RequestArguments?
    /// Every `X-Forwarded-For` field joined with `, `, nil when there is none (as
    /// `HTTPRequest.forwardedFor`; read by the fast path only when trusted proxies are configured).
    var forwardedFor: String? { get }
    /// The first value of a request header, nil when absent (read by the fast path only where a
    /// route depends on one: `Accept` of `/dns-query`), borrowed as the rest of the head.
    func header(_ name: StaticString) -> UnsafeRawBufferPointer?
    /// The access log's id of the request, nil without the access log (read by the query log).
    var requestID: String? { get }
}

/// The query argument names one fast route reads (at most `RequestArguments.capacity`), built
/// once per route: the first is the one whose value the caller checks itself (see
/// `RequestHead.arguments`). Held inline, not in an array: both HTTP threads read a route's
/// names on every request, and each read of an array retained and released it, atomic writes
/// to the one shared buffer (the cache line went back and forth between the cores).
public struct ArgumentNames: Sendable {
    private var names:
        (
            StaticString, StaticString, StaticString, StaticString, StaticString,
            StaticString, StaticString, StaticString, StaticString, StaticString
        ) = ("", "", "", "", "", "", "", "", "", "")
    let count: Int

    init(_ names: StaticString...) {
        precondition(!names.isEmpty && names.count <= RequestArguments.capacity, "ArgumentNames: 1 to \(RequestArguments.capacity) names")
        count = names.count
        withUnsafeMutableBytes(of: &self.names) { storage in
            for (index, name) in names.enumerated() {
                storage.storeBytes(of: name, toByteOffset: index * MemoryLayout<StaticString>.stride, as: StaticString.self)
            }
        }
    }

    /// The `index`th name.
    subscript(index: Int) -> StaticString {
        precondition(index >= 0 && index < count)
        return withUnsafeBytes(of: names) { $0.load(fromByteOffset: index * MemoryLayout<StaticString>.stride, as: StaticString.self) }
    }

    /// The position of `name` among the names, nil when it is none of them.
    @inline(__always)
    func index(of name: UnsafeRawBufferPointer) -> Int? {
        for index in 0..<count where name.equals(self[index]) { return index }
        return nil
    }
}

/// What `RequestHead.arguments` found: the first value of each name asked, in the order asked,
/// without an allocation, and the count of arguments with none of the names.
public struct RequestArguments {
    /// The most names one read may ask for.
    public static let capacity = 10
    private var values:
        (
            UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?,
            UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?, UnsafeRawBufferPointer?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
    /// Arguments whose name is none of those asked (the route may ignore or refuse them).
    public internal(set) var others = 0

    public init() {}

    /// The value of the `index`th name asked: nil when the request has none, empty (with a nil
    /// base) for a name without `=`.
    public subscript(index: Int) -> UnsafeRawBufferPointer? {
        get {
            precondition(index >= 0 && index < Self.capacity)
            return withUnsafeBytes(of: values) {
                $0.load(fromByteOffset: index * MemoryLayout<UnsafeRawBufferPointer?>.stride, as: UnsafeRawBufferPointer?.self)
            }
        }
        set {
            precondition(index >= 0 && index < Self.capacity)
            withUnsafeMutableBytes(of: &values) {
                $0.storeBytes(
                    of: newValue, toByteOffset: index * MemoryLayout<UnsafeRawBufferPointer?>.stride, as: UnsafeRawBufferPointer?.self)
            }
        }
    }

    /// Takes `value` for the name at `index` unless one was taken before; true when taken.
    @inline(__always)
    mutating func offer(_ index: Int, value: UnsafeRawBufferPointer?) -> Bool {
        guard self[index] == nil else { return false }
        self[index] = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
        return true
    }
}

/// The request head of a libmicrohttpd connection inside its access callback.
public struct ConnectionHead: RequestHead {
    let connection: OpaquePointer
    public let method: UnsafeRawBufferPointer
    public let path: UnsafeRawBufferPointer
    public let requestID: String?

    init(connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, requestID: String? = nil) {
        self.connection = connection
        self.requestID = requestID
        self.method = UnsafeRawBufferPointer(start: method, count: strlen(method))
        self.path = UnsafeRawBufferPointer(start: url, count: strlen(url))
    }

    /// `MHD_CONNECTION_INFO_CLIENT_ADDRESS`, copied without an allocation.
    public var peerAddress: PeerAddress? { chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init) }

    /// One pass over libmicrohttpd's arguments (`MHD_get_connection_values_n`, which gives the
    /// decoded lengths) for all the names: each pass walks the headers too.
    public func arguments(_ names: ArgumentNames) -> RequestArguments? {
        var search = ArgumentSearch(names: names)
        let iterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
            guard let cls, let key else { return .YES }
            let search = cls.assumingMemoryBound(to: ArgumentSearch.self)
            let name = UnsafeRawBufferPointer(start: key, count: keySize)
            let value = value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) }
            search.pointee.offer(name, value: value)
            return .YES
        }
        _ = withUnsafeMutablePointer(to: &search) { pointer in
            MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
        }
        guard !search.refused else { return nil }
        return search.found
    }

    /// The arguments in one pass of `MHD_get_connection_values_n` (after one that only counts
    /// them, to size the list on the stack), the `Authorization` header by
    /// `MHD_lookup_connection_value_n`: the bytes libmicrohttpd holds, nothing copied.
    public func withSignedParts<Result>(_ body: (SignedParts) -> Result) -> Result {
        let count = Int(MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, nil, nil))
        return withUnsafeTemporaryAllocation(of: ArgumentPair.self, capacity: max(count, 1)) { storage in
            var collector = ArgumentPairCollector(into: storage)
            let iterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
                guard let cls, let key else { return .YES }
                cls.assumingMemoryBound(to: ArgumentPairCollector.self).pointee.offer(
                    name: UnsafeRawBufferPointer(start: key, count: keySize),
                    value: value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) })
                return .YES
            }
            _ = withUnsafeMutablePointer(to: &collector) { pointer in
                MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
            }
            let name: StaticString = "Authorization"
            var value: UnsafePointer<CChar>?
            var length = 0
            let found = MHD_lookup_connection_value_n(
                connection, .HEADER_KIND, UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self), name.utf8CodeUnitCount,
                &value, &length)
            let authorization = found == .YES ? value.map { UnsafeRawBufferPointer(start: $0, count: length) } : nil
            return body(
                SignedParts(
                    method: method, path: path, arguments: collector.pairs, hasRepeatedNames: collector.hasRepeatedNames,
                    authorization: authorization, body: UnsafeRawBufferPointer(start: nil, count: 0)))
        }
    }

    /// `HTTPRequest`'s own reading of the `X-Forwarded-For` fields.
    public var forwardedFor: String? { HTTPRequest.forwardedFor(connection) }

    /// `MHD_lookup_connection_value` of a header.
    public func header(_ name: StaticString) -> UnsafeRawBufferPointer? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self))
            .map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) }
    }
}

/// One pass of `RequestHead.arguments` (`ConnectionHead`'s, and the tests' heads in memory).
struct ArgumentSearch {
    let names: ArgumentNames
    private(set) var found = RequestArguments()
    /// Some argument other than the first name's first value held a control character or invalid UTF-8.
    private(set) var refused = false

    init(names: ArgumentNames) { self.names = names }

    /// Reads one argument.
    mutating func offer(_ name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        if let index = names.index(of: name) {
            // The first name's value is the caller's to check; every other byte is checked here.
            if found.offer(index, value: value) && index == 0 { return }
        } else {
            found.others += 1
        }
        if !DecodedArgument.isAcceptable(name) || value.map({ !DecodedArgument.isAcceptable($0) }) == true {
            refused = true
        }
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

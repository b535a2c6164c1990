import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPRequest {
    /// The request libmicrohttpd holds for `connection`, copied out (`MHD_get_connection_values_n`
    /// for the arguments, `MHD_lookup_connection_value` for the headers): what the general path
    /// hands to the router, with what the server knows of it besides (`listener`, `isTLS`, the
    /// access log's `requestID`, `fastPathDeclined`). Every field is set here, so the caller's
    /// request is final as built: delegating to `init(method:...)` and setting the rest after,
    /// here or in the caller, copied the whole request each time (callgrind).
    init(
        connection: OpaquePointer, method: String, path: String, body: [UInt8], listener: Listener, isTLS: Bool,
        requestID: String?, fastPathDeclined: Bool
    ) {
        self.method = method
        self.path = path
        query = Self.queryArguments(connection)
        authorization = Self.header(connection, "Authorization")
        self.body = body
        peerAddress = chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init)
        forwardedFor = Self.forwardedFor(connection)
        self.listener = listener
        accept = Self.header(connection, "Accept")
        contentType = Self.header(connection, "Content-Type")
        ifMatch = Self.header(connection, "If-Match")
        consoleSession = Self.value(connection, .COOKIE_KIND, ConsoleSessions.cookieName)
        csrfToken = Self.header(connection, ConsoleSessions.csrfHeader)
        self.isTLS = isTLS
        self.requestID = requestID
        self.fastPathDeclined = fastPathDeclined
    }

    /// The first field `name` of the request's header, copied.
    static func header(_ connection: OpaquePointer, _ name: String) -> String? {
        value(connection, .HEADER_KIND, name)
    }

    /// The first value named `name` of `kind` (header field, cookie), copied. `withCString` gives
    /// a short name its terminated copy on the stack; passing the `String` itself made one on the
    /// heap.
    private static func value(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        name.withCString { MHD_lookup_connection_value(connection, kind, $0) }.map { String(cString: $0) }
    }

    /// Every `X-Forwarded-For` field joined with `, `, or nil. The common case (no such header)
    /// costs one lookup; only when there is one are the headers walked to find repeated fields.
    static func forwardedFor(_ connection: OpaquePointer) -> String? {
        guard let first = header(connection, "X-Forwarded-For") else { return nil }
        final class Box { var values: [String] = [] }
        let box = Box()
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            guard let cls, let key, let value else { return .YES }
            // Header names compare case-insensitively; strcasecmp avoids a String per header.
            if strcasecmp(key, "X-Forwarded-For") == 0 {
                Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue().values.append(String(cString: value))
            }
            return .YES
        }
        _ = withExtendedLifetime(box) {
            MHD_get_connection_values(connection, .HEADER_KIND, iterator, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.values.count > 1 ? box.values.joined(separator: ", ") : first
    }

    /// Collects the query arguments (first value of each name) through an iterator callback,
    /// into one buffer (see `QueryArguments`), with the decoded lengths libmicrohttpd gives
    /// (`MHD_get_connection_values_n`): a value is never read up to a `%00` as a C string.
    private static func queryArguments(_ connection: OpaquePointer) -> QueryArguments {
        var arguments = QueryArguments()
        let iterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
            guard let cls, let key else { return .YES }
            cls.assumingMemoryBound(to: QueryArguments.self).pointee.append(
                name: UnsafeRawBufferPointer(start: key, count: keySize),
                value: value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) })
            return .YES
        }
        _ = withUnsafeMutablePointer(to: &arguments) { pointer in
            MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, iterator, UnsafeMutableRawPointer(pointer))
        }
        return arguments
    }
}

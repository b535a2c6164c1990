import CMicroHTTPD
import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// Queueing responses with libmicrohttpd: the general path's `HTTPResponse`, the fast path's
/// `FastResponse`, and the headers both add.
extension HTTPServer {
    /// Queues `response`; with the access log on (`context` holds its start and id), adds
    /// `X-Request-Id` and writes the request's line.
    func queue(
        _ connection: OpaquePointer, _ response: consuming HTTPResponse, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?,
        context: RequestContext?
    ) -> MHD_Result {
        if let context, let id = context.requestID {
            response.headers.append(("X-Request-Id", id))
            AccessLog.write(
                connection, method: method, path: url, status: response.status, bytes: response.body.count, context: context,
                account: response.logAccount, source: response.source?.rawValue)
        }
        return queue(connection, response)
    }

    func queue(_ connection: OpaquePointer, _ response: HTTPResponse) -> MHD_Result {
        metrics.record(status: response.status, endpoint: response.endpoint)
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        var added = Self.addContentType(mhdResponse, response.contentType)
        for (name, value) in response.headers where added { added = Self.addHeader(mhdResponse, name, value) }
        let result = added ? MHD_queue_response(connection, UInt32(response.status), mhdResponse) : .NO
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// A fast-path response: its memory goes to libmicrohttpd, which frees it once sent. The
    /// fast path answers cache hits only (`HTTPDNSService.fastResponse`), a 200 in the format of
    /// its route.
    func queue(
        _ connection: OpaquePointer, fast response: consuming FastResponse, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?,
        context: RequestContext?
    ) -> MHD_Result {
        metrics.recordFastHit(endpoint: response.endpoint)
        let count = response.count
        let contentType = response.contentType, maxAge = response.maxAge
        let account = response.account, source = response.source
        let body = response.take()
        guard let mhdResponse = MHD_create_response_from_buffer(count, body, .RESPMEM_MUST_FREE) else {
            free(body)
            return .NO
        }
        var added = Self.addContentType(mhdResponse, contentType)
        if added, let maxAge {
            added = CacheControl.withValue(maxAge: maxAge) { Self.addHeader(mhdResponse, Self.cString(CacheControl.name), $0) }
        }
        if added, let context, let id = context.requestID {
            added = Self.addHeader(mhdResponse, "X-Request-Id", id)
            AccessLog.write(
                connection, method: method, path: url, status: 200, bytes: count, context: context,
                account: String(decoding: account, as: UTF8.self), source: source.rawValue)
        }
        let result = added ? MHD_queue_response(connection, UInt32(MHD_HTTP_OK), mhdResponse) : .NO
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// `Content-Type: type` (nil: JSON, as a fast response says it), both paths' one writer of
    /// it. JSON, the usual case, from static C strings: a Swift string passed as `const char *`
    /// is copied into a new array on every call when it is short (12 bytes here).
    private static func addContentType(_ response: OpaquePointer, _ type: String?) -> Bool {
        guard let type, type != HTTPResponse.jsonType else {
            return addHeader(response, cString("Content-Type"), cString(HTTPResponse.jsonTypeLiteral))
        }
        return addHeader(response, "Content-Type", type)
    }

    /// `MHD_add_response_header` (which copies both), the one place its result is checked: false
    /// when libmicrohttpd refused the header (a name or value it does not send, such as one with
    /// a line break, or no memory), logged; the response is then not queued and
    /// libmicrohttpd closes the connection. A header with an empty value is left out: HTTP allows
    /// one, libmicrohttpd 0.9.75 refuses it (it was always left out; `HTTPServerTests`' echo
    /// handler sends one).
    private static func addHeader(_ response: OpaquePointer, _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>) -> Bool {
        guard value.pointee != 0 else { return true }
        guard MHD_add_response_header(response, name, value) == .YES else {
            Log.error("HTTP: libmicrohttpd refused the response header '\(Log.escaped(String(cString: name)))'; the connection is closed")
            return false
        }
        return true
    }

    /// The same for Swift strings, through `withCString`: a short string passed as `const char *`
    /// would be copied into a new array first.
    private static func addHeader(_ response: OpaquePointer, _ name: String, _ value: String) -> Bool {
        name.withCString { name in value.withCString { value in addHeader(response, name, value) } }
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

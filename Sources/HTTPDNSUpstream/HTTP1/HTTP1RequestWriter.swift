/// Serialises an ``UpstreamHTTPRequest`` as HTTP/1.1 bytes into a buffer that a connection
/// reuses from request to request: `METHOD target HTTP/1.1`, `Host`, the request's own headers in
/// order, `Content-Length` for a POST, the empty line and the body. Every piece is copied from
/// its string's UTF-8 storage; no string is built per request.
enum HTTP1RequestWriter {
    /// - Parameter target: the offset of the request target (path and query) in `request.url`'s UTF-8.
    static func write(_ request: UpstreamHTTPRequest, target: Int, authority: [UInt8], into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        switch request.method {
        case .get: append("GET ", to: &buffer)
        case .post: append("POST ", to: &buffer)
        }
        var url = request.url
        url.withUTF8 { bytes in
            if target >= bytes.count || bytes[target] != UInt8(ascii: "/") { buffer.append(UInt8(ascii: "/")) }
            if target < bytes.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[target...])) }
        }
        append(" HTTP/1.1\r\nHost: ", to: &buffer)
        buffer.append(contentsOf: authority)
        append("\r\n", to: &buffer)
        for header in request.headers {
            append(header.name, to: &buffer)
            append(": ", to: &buffer)
            append(header.value, to: &buffer)
            append("\r\n", to: &buffer)
        }
        if request.method == .post {
            append("Content-Length: ", to: &buffer)
            buffer.appendDecimal(request.body.count)
            append("\r\n", to: &buffer)
        }
        append("\r\n", to: &buffer)
        if request.method == .post { buffer.append(contentsOf: request.body) }
    }

    private static func append(_ text: StaticString, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func append(_ text: String, to buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }
}

/// Serialises an ``UpstreamHTTPRequest`` as HTTP/1.1 bytes into a buffer that a connection
/// reuses from request to request: `METHOD target HTTP/1.1`, `Host`, the request's own headers in
/// order, `Content-Length` for a POST, the empty line and the body. Bytes are appended from the
/// strings' UTF-8 views; no string is built per request.
enum HTTP1RequestWriter {
    static func write(_ request: UpstreamHTTPRequest, target: String.Index, authority: String, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        switch request.method {
        case .get: buffer.append(contentsOf: "GET ".utf8)
        case .post: buffer.append(contentsOf: "POST ".utf8)
        }
        let path = request.url.utf8[target...]
        if path.first != UInt8(ascii: "/") { buffer.append(UInt8(ascii: "/")) }
        buffer.append(contentsOf: path)
        buffer.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        buffer.append(contentsOf: authority.utf8)
        buffer.append(contentsOf: "\r\n".utf8)
        for header in request.headers {
            buffer.append(contentsOf: header.name.utf8)
            buffer.append(contentsOf: ": ".utf8)
            buffer.append(contentsOf: header.value.utf8)
            buffer.append(contentsOf: "\r\n".utf8)
        }
        if request.method == .post {
            buffer.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(request.body.count, to: &buffer)
            buffer.append(contentsOf: "\r\n".utf8)
        }
        buffer.append(contentsOf: "\r\n".utf8)
        if request.method == .post { buffer.append(contentsOf: request.body) }
    }

    /// `value` (not negative) in decimal digits.
    private static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

import HTTPDNSCore

/// Serialises an ``UpstreamHTTPRequest`` as HTTP/1.1 bytes into a buffer that a connection
/// reuses from request to request: `METHOD target HTTP/1.1`, `Host`, the request's own headers in
/// order, `Content-Length` for a POST, the empty line and the body. The head's length is counted
/// first and the buffer sized once; every piece is then copied from its string's UTF-8 storage
/// into place, and the body appended. No string is built per request.
enum HTTP1RequestWriter {
    /// - Parameter target: the offset of the request target (path and query) in `request.url`'s UTF-8.
    static func write(_ request: UpstreamHTTPRequest, target: Int, authority: [UInt8], into buffer: inout [UInt8]) {
        let method: StaticString = request.method == .get ? "GET " : "POST "
        var bodyLength: [UInt8] = []
        if request.method == .post { bodyLength.appendDecimal(request.body.count) }
        var url = request.url
        url.withUTF8 { url in
            let path = UnsafeBufferPointer(rebasing: url[min(target, url.count)...])
            let slash = path.first != UInt8(ascii: "/")
            var length = method.utf8CodeUnitCount + (slash ? 1 : 0) + path.count + version.utf8CodeUnitCount + authority.count + 2
            for header in request.headers { length += header.name.utf8.count + 2 + header.value.utf8.count + 2 }
            if request.method == .post { length += contentLength.utf8CodeUnitCount + bodyLength.count + 2 }
            length += 2
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: repeatElement(0, count: length))
            buffer.withUnsafeMutableBufferPointer { out in
                var cursor = Cursor(out: out)
                cursor.put(method)
                if slash { cursor.put("/") }
                cursor.put(path)
                cursor.put(version)
                authority.withUnsafeBufferPointer { cursor.put($0) }
                cursor.put(lineEnd)
                for header in request.headers {
                    cursor.put(header.name)
                    cursor.put(separator)
                    cursor.put(header.value)
                    cursor.put(lineEnd)
                }
                if request.method == .post {
                    cursor.put(contentLength)
                    bodyLength.withUnsafeBufferPointer { cursor.put($0) }
                    cursor.put(lineEnd)
                }
                cursor.put(lineEnd)
                precondition(cursor.end == length, "an upstream request head of \(cursor.end) bytes counted as \(length)")
            }
        }
        if request.method == .post { buffer.append(contentsOf: request.body) }
    }

    private static let version: StaticString = " HTTP/1.1\r\nHost: "
    private static let lineEnd: StaticString = "\r\n"
    private static let separator: StaticString = ": "
    private static let contentLength: StaticString = "Content-Length: "

    /// Where the next piece goes in the sized buffer.
    private struct Cursor {
        let out: UnsafeMutableBufferPointer<UInt8>
        var end = 0

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
            precondition(end + bytes.count <= out.count, "an upstream request longer than counted")
            (out.baseAddress! + end).update(from: base, count: bytes.count)
            end += bytes.count
        }

        mutating func put(_ text: StaticString) {
            put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func put(_ text: String) {
            var text = text
            text.withUTF8 { put($0) }
        }
    }
}

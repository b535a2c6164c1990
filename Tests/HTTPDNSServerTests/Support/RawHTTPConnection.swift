import Foundation
import HTTPDNSTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the raw test client.
struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A response as it came off the wire.
struct RawResponse {
    var status: Int
    /// Header fields with lower-cased names, in arrival order.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    func headerCount(_ name: String) -> Int {
        headers.filter { $0.name == name.lowercased() }.count
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
}

/// One blocking HTTP/1.1 connection to 127.0.0.1 (socket/connect/send/recv), kept open between
/// requests so keep-alive can be observed. Not thread-safe: one thread uses it.
final class RawHTTPConnection {
    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects; every later `recv`/`send` gives up after `timeout` seconds. The default is a
    /// hang guard: a reply held up by a loaded machine (tests in parallel on two busy cores)
    /// must not read as no reply.
    init(port: UInt16, timeout: Double = 30) throws {
        // Connected before it is stored: `deinit` closes it, and only a connected one.
        fd = try connectToLoopback(port: port, timeout: timeout)
    }

    deinit { close(fd) }

    /// Sends every byte; false when the peer stopped reading (reset or closed).
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// Writes a request; adds `Host` and (with a body and no `Transfer-Encoding`) `Content-Length`.
    @discardableResult
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) -> Bool {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        if let body, !framed { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return write(Array(head.utf8) + (body ?? []))
    }

    /// Sends a request and reads its response.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws -> RawResponse {
        send(method, path, headers: headers, body: body)
        return try readResponse()
    }

    /// Reads exactly one response (Content-Length or chunked framing); bytes after it stay
    /// buffered for the next call.
    func readResponse() throws -> RawResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd = pending.firstRange(of: separator)
        while headEnd == nil {
            try fill()
            headEnd = pending.firstRange(of: separator)
        }
        let head = String(decoding: pending[..<headEnd!.lowerBound], as: UTF8.self)
        pending.removeSubrange(..<headEnd!.upperBound)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw RawHTTPError("bad status line in \(head)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError("bad header line '\(line)'") }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            response.body = try readChunked()
        } else if let text = response.header("content-length") {
            guard let length = Int(text) else { throw RawHTTPError("bad Content-Length '\(text)'") }
            while pending.count < length { try fill() }
            response.body = Array(pending[..<length])
            pending.removeSubrange(..<length)
        } else {
            throw RawHTTPError("response without Content-Length or chunked framing: \(head)")
        }
        return response
    }

    /// True when the server closes the connection (recv gives 0 or a reset) before `timeout`
    /// and before sending anything more.
    func isClosedByPeer() -> Bool {
        guard pending.isEmpty else { return false }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n == 0 || (n < 0 && errno == ECONNRESET)
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd = pending.firstRange(of: [13, 10])
            while lineEnd == nil {
                try fill()
                lineEnd = pending.firstRange(of: [13, 10])
            }
            let sizeText = String(decoding: pending[..<lineEnd!.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw RawHTTPError("bad chunk size '\(sizeText)'")
            }
            pending.removeSubrange(..<lineEnd!.upperBound)
            while pending.count < size + 2 { try fill() }
            if size == 0 {
                pending.removeSubrange(..<2)
                return body
            }
            body += pending[..<size]
            pending.removeSubrange(..<(size + 2))
        }
    }

    private func fill() throws {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                pending += buffer[..<n]
                return
            }
            if n == 0 { throw RawHTTPError("connection closed by the server (\(pending.count) bytes pending)") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw RawHTTPError("timed out waiting for the server") }
            throw RawHTTPError("recv failed: errno \(errno)")
        }
    }
}

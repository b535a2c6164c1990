import Foundation
import HTTPDNSTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 connection to 127.0.0.1 kept open across requests (blocking calls: use it from
/// one thread of its own). It reads responses framed by `Content-Length` only, which is how
/// httpdnsd frames every answer.
final class KeepAliveConnection {
    private let fd: Int32
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// Connects to `port`; a send or receive that waits `timeout` seconds fails.
    init(port: UInt16, timeout: Double = 30) throws {
        // Connected before it is stored: `deinit` closes it, and only a connected one.
        fd = try connectToLoopback(port: port, timeout: timeout)
    }

    deinit { close(fd) }

    /// GET `target` with `headers`; the status and body of the response.
    func get(_ target: String, headers: [(String, String)] = []) throws -> (status: Int, body: [UInt8]) {
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8)
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HarnessError("send: errno \(errno)") }
            sent += n
        }
        return try response()
    }

    private func response() throws -> (status: Int, body: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = pending.firstRange(of: separator) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self).lowercased()
                let lines = head.components(separatedBy: "\r\n")
                let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) }
                let length = lines.lazy.compactMap { line -> Int? in
                    guard line.hasPrefix("content-length:") else { return nil }
                    return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                }.first
                guard let status, let length else { throw HarnessError("response without status or Content-Length: \(head)") }
                if pending.count >= end.upperBound + length {
                    let body = Array(pending[end.upperBound..<(end.upperBound + length)])
                    pending.removeFirst(end.upperBound + length)
                    return (status, body)
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw HarnessError(n == 0 ? "the server closed the connection" : "recv: errno \(errno)") }
            pending += buffer[0..<n]
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client for loopback servers, one connection per request (`Connection: close`).
///
/// Blocking calls run on their own `Thread` when used through the async API, so hundreds of
/// requests can be in flight at once without starving the cooperative pool.
public struct HTTPClient: Sendable {
    /// IPv4 loopback address to connect to.
    public var host: String
    /// TCP port to connect to.
    public var port: UInt16
    /// Seconds a request may take in total (connect, send, receive).
    public var timeout: Double
    /// The loopback address requests come from (e.g. `127.0.0.2`, one client among several);
    /// nil: the kernel's choice.
    public var source: String?

    public init(host: String = "127.0.0.1", port: UInt16, timeout: Double = 15, source: String? = nil) {
        precondition(host.hasPrefix("127."), "HTTPClient talks to IPv4 loopback only")
        precondition(source?.hasPrefix("127.") ?? true, "HTTPClient sends from IPv4 loopback only")
        self.host = host
        self.port = port
        self.timeout = timeout
        self.source = source
    }

    /// GET `path` (with its query string).
    public func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPClientResponse {
        try await request("GET", path, headers: headers)
    }

    /// POST a JSON value to `path`.
    public func post(_ path: String, json: TestJSON, headers: [String: String] = [:]) async throws -> HTTPClientResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return try await request("POST", path, headers: headers, body: Array(json.encoded().utf8))
    }

    /// PUT a JSON value to `path`.
    public func put(_ path: String, json: TestJSON, headers: [String: String] = [:]) async throws -> HTTPClientResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return try await request("PUT", path, headers: headers, body: Array(json.encoded().utf8))
    }

    /// DELETE `path`.
    public func delete(_ path: String, headers: [String: String] = [:]) async throws -> HTTPClientResponse {
        try await request("DELETE", path, headers: headers)
    }

    /// Sends any request on a dedicated thread.
    public func request(
        _ method: String, _ path: String, headers: [String: String] = [:],
        body: [UInt8]? = nil
    ) async throws -> HTTPClientResponse {
        let client = self
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try client.requestBlocking(method, path, headers: headers, body: body) })
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    /// Sends a request and blocks until the whole response has arrived (or `timeout`).
    public func requestBlocking(
        _ method: String, _ path: String, headers: [String: String] = [:],
        body: [UInt8]? = nil
    ) throws -> HTTPClientResponse {
        let fd = try connectedSocket()
        defer { close(fd) }

        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            head += "\(name): \(value)\r\n"
        }
        if let body, headers.keys.first(where: { $0.lowercased() == "content-length" }) == nil {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var outgoing = Array(head.utf8)
        if let body { outgoing += body }
        // A server may answer (413, 405) and close before reading a large body: ignore send errors
        // and read whatever response arrived.
        Self.sendAll(fd, outgoing)

        var incoming: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                incoming += buffer[0..<n]
                if let complete = try? HTTPClientResponseParser.parse(incoming, complete: false) { return complete }
                continue
            }
            if n == 0 { break }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw HarnessError("\(method) \(path): no complete response within \(timeout)s (got \(incoming.count) bytes)")
            }
            if incoming.isEmpty { throw HarnessError("\(method) \(path): recv failed: errno \(errno)") }
            break
        }
        return try HTTPClientResponseParser.parse(incoming, complete: true)
    }

    /// A socket connected to the server (bound to `source` when set), with `timeout` for every
    /// send and receive; the caller closes it.
    func connectedSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var keep = false
        defer { if !keep { close(fd) } }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw HarnessError("bind to \(source) failed: errno \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw HarnessError("connect to \(host):\(port) failed: errno \(errno)")
        }
        keep = true
        return fd
    }

    /// Sends every byte it can; a send error ends it quietly (a server may answer and close before
    /// reading all of a request), and whatever response arrived is read after.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
    }
}

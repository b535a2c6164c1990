import Foundation
import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server of Python sockets on loopback, for the HTTP/1.1 client's tests: it
/// counts the connections it accepts, and each answer's body is `CONNECTIONS ACCEPT MAXBUSY`
/// (connections accepted so far, the request's `Accept` header or `-`, the most requests it ever
/// held at once). libcurl sends `Accept: */*` and httpdnsd's own client sends none, which tells a
/// test which one carried a request. Use ``with(mode:host:_:)``.
///
/// Modes:
/// - `keepalive`: answers every request on a connection (`Content-Length`); `/chunked` answers
///   with chunked coding, an extension and a trailer; `/slow` holds the request 50 ms first.
/// - `closeidle`: answers the first request of each connection, then closes the connection when
///   the next request arrives, without answering it and without having said `Connection: close`
///   (a server closing an idle keep-alive connection just as the client reuses it).
/// - `close`: answers each request with `Connection: close` and closes the connection.
/// - `stall`: sends the head and half the body of each answer, then nothing.
/// - `early`: reads a request's head only, answers 413 at once and reads nothing more (a client
///   still writing a large body then has a response to read while its writes block).
final class ScriptedHTTP1Server {
    /// Set once the server listens (`with` runs its body after that).
    private(set) var port: UInt16 = 0
    let host: String
    private let directory: URL
    private let process = Process()

    /// `http://HOST:PORT` (IPv6 in brackets).
    var baseURL: String { host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)" }

    static let script = #"""
        import os, signal, socket, sys, threading, time
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        HOST, PORT_FILE, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
        LOCK = threading.Lock()
        STATE = {"accepted": 0, "busy": 0, "maxbusy": 0}

        def read_request(conn, buf):
            while b"\r\n\r\n" not in buf:
                data = conn.recv(65536)
                if not data:
                    return None, b""
                buf += data
            head, rest = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            fields = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            length = int(fields.get("content-length", "0"))
            while len(rest) < length:
                data = conn.recv(65536)
                if not data:
                    return None, b""
                rest += data
            return (lines[0].split(" ")[1], fields), rest[length:]

        def serve(conn):
            buf, served = b"", 0
            if MODE == "early":
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                time.sleep(3600)
            while True:
                request, buf = read_request(conn, buf)
                if request is None or (MODE == "closeidle" and served == 1):
                    break
                path, fields = request
                with LOCK:
                    STATE["busy"] += 1
                    STATE["maxbusy"] = max(STATE["maxbusy"], STATE["busy"])
                if path.startswith("/slow"):
                    time.sleep(0.05)
                with LOCK:
                    STATE["busy"] -= 1
                    body = f'{STATE["accepted"]:06d} {fields.get("accept", "---")} {STATE["maxbusy"]:06d}'.encode()
                head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Mixed-Case:  spaced value \r\n"
                if MODE == "stall":
                    conn.sendall(head + b"Content-Length: %d\r\n\r\n" % (2 * len(body)) + body)
                    time.sleep(3600)
                elif MODE == "close":
                    conn.sendall(head + b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                    break
                elif path.startswith("/chunked"):
                    conn.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n%x;ext=1\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n" % (len(body), body))
                else:
                    conn.sendall(head + b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                served += 1
            conn.close()

        family = socket.AF_INET6 if ":" in HOST else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, 0))
        listener.listen(128)
        with open(PORT_FILE + ".tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        os.rename(PORT_FILE + ".tmp", PORT_FILE)
        while True:
            conn, _ = listener.accept()
            with LOCK:
                STATE["accepted"] += 1
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """#

    /// Starts the server, runs `body`, and stops it whatever happens.
    static func with<T>(mode: String, host: String = "127.0.0.1", _ body: (ScriptedHTTP1Server) async throws -> T) async throws -> T {
        let server = try ScriptedHTTP1Server(mode: mode, host: host)
        defer { server.stop() }
        try await server.waitUntilListening()
        return try await body(server)
    }

    private init(mode: String, host: String) throws {
        self.host = host
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("http1-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptPath = directory.appendingPathComponent("server.py").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [scriptPath, host, directory.appendingPathComponent("port").path, mode]
        try process.run()
    }

    /// Reads the port the script bound, then makes one TCP connect, which the server counts
    /// (tests read counts relative to the first answer, or subtract this one).
    private func waitUntilListening() async throws {
        port = try await portWritten(to: directory.appendingPathComponent("port"), by: process)
        guard Self.canConnect(host: host, port: port) else {
            throw LoopbackDNSServers.StartError(description: "python3 HTTP/1.1 test server does not accept on port \(port)")
        }
    }

    /// Whether a TCP connect to `host`:`port` succeeds (IPv4 or IPv6 loopback).
    private static func canConnect(host: String, port: UInt16) -> Bool {
        guard let address = SocketAddress(host, port: port) else { return false }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return address.withSockaddr { connect(fd, $0, $1) } == 0
    }

    func stop() {
        stopProcess(process)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// One answer's body of ``ScriptedHTTP1Server``.
struct ScriptedHTTP1Answer: Equatable {
    /// Connections the server had accepted (the readiness probe's included).
    var connections: Int
    /// The request's `Accept` header, `---` when it had none.
    var accept: String
    /// The most requests the server ever held at once.
    var maxBusy: Int

    init?(_ body: [UInt8]) {
        let parts = String(decoding: body, as: UTF8.self).split(separator: " ")
        guard parts.count == 3, let connections = Int(parts[0]), let maxBusy = Int(parts[2]) else { return nil }
        self.connections = connections
        self.accept = String(parts[1])
        self.maxBusy = maxBusy
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Python `http.server` on loopback speaking the DoH JSON API (`/resolve`) and the EMAS HTTPDNS
/// API (`/100000/d`, `/100000/sign_d`) for a few fixed names, checking signatures with Python's
/// `hashlib`, with its clock (and `Date` header) `skew` seconds ahead of ours. Use ``with(skew:_:)``.
/// `/connections` counts the client ports seen; `/fields?n=N` answers with N header fields of
/// 1 KiB each; `/gather?key=K&n=N` holds each request until N
/// with the same key are waiting at once, so a test can prove that N transfers were in flight
/// together without measuring time.
final class FakeJSONUpstream {
    /// Set once the server listens (`with` runs its body after that).
    private(set) var port: UInt16 = 0
    private let directory: URL
    private let process = Process()

    /// `accessKeySecret` for `/resolve` signatures and `secretKey` for `sign_d`.
    static let accessKeySecret = "SECRET"
    static let secretKey = "SECRETKEY"

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static let script = #"""
        import email.utils, hashlib, json, os, signal, sys, threading, time
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlparse, parse_qs
        PORT_FILE, SKEW = sys.argv[1], int(sys.argv[2])
        PORTS = set()
        LOCK, BARRIERS = threading.Lock(), {}
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def date_time_string(self, timestamp=None):
                return email.utils.formatdate(time.time() + SKEW, usegmt=True)
            def log_message(self, *args):
                pass
            def reply(self, status, obj):
                body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self):
                u = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(u.query).items()}
                if u.path == "/connections":
                    return self.reply(200, {"count": len(PORTS)})
                if u.path == "/fields":
                    # n header fields of 1 KiB each (X-Field-0 ... X-Field-{n-1}), then a small body.
                    self.send_response(200)
                    for i in range(int(q["n"])):
                        self.send_header(f"X-Field-{i}", "v" * 1000)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    return
                if u.path == "/gather":
                    # Answers only once n requests of the same key wait here at the same time
                    # (504 if they do not all arrive within 30 s: a bound that only guards against a hang).
                    with LOCK:
                        barrier = BARRIERS.setdefault(q["key"], threading.Barrier(int(q["n"]), timeout=30))
                    try:
                        barrier.wait()
                    except threading.BrokenBarrierError:
                        return self.reply(504, {"code": "NotGathered"})
                    return self.reply(200, {"gathered": int(q["n"])})
                PORTS.add(self.client_address[1])
                if u.path == "/resolve":
                    name, rtype = q.get("name"), q.get("type")
                    if "uid" in q:
                        key = hashlib.sha256((q["uid"] + "SECRET" + q["ts"] + name + q["ak"]).encode()).hexdigest()
                        if q["key"] != key or abs(int(q["ts"]) - (time.time() + SKEW)) > 5:
                            return self.reply(403, {"code": "InvalidSignature"})
                    if name == "www.example.test" and rtype == "1":
                        return self.reply(200, {"Status": 0, "Answer": [
                            {"name": "www.example.test.", "type": 5, "TTL": "30", "data": "edge.example.test."},
                            {"name": "edge.example.test.", "type": 1, "TTL": 300, "data": "127.0.0.11"}]})
                    if name == "nope.example.test":
                        return self.reply(200, {"Status": 3, "Authority": [
                            {"name": "example.test.", "type": 6, "TTL": 3600, "data": "ns. admin. 1 2 3 4 45"}]})
                    if name == "bad.example.test":
                        return self.reply(400, {"code": "InvalidName"})
                    if name == "broken.example.test":
                        return self.reply(200, b"<html>oops</html>")
                    return self.reply(200, {"Status": 2})
                parts = u.path.split("/")
                if len(parts) == 3 and parts[2] in ("d", "sign_d"):
                    if parts[1] != "100000":
                        return self.reply(403, {"code": "InvalidAccount"})
                    if parts[2] == "sign_d":
                        s = hashlib.md5((q["host"] + "-SECRETKEY-" + q["t"]).encode()).hexdigest()
                        if q["s"] != s:
                            return self.reply(403, {"code": "InvalidSignature"})
                    if q["host"] == "www.example.test":
                        return self.reply(200, {"host": q["host"], "ips": ["127.0.0.11"], "ipsv6": ["::1"], "ttl": 90})
                    return self.reply(200, {"host": q["host"], "ips": [], "ipsv6": [], "ttl": 30})
                self.reply(404, {"code": "NotFound"})
        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        with open(PORT_FILE + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(PORT_FILE + ".tmp", PORT_FILE)
        server.serve_forever()
        """#

    /// Starts the server, runs `body`, and stops it whatever happens.
    static func with<T>(skew: Int = 0, _ body: (FakeJSONUpstream) async throws -> T) async throws -> T {
        let server = try FakeJSONUpstream(skew: skew)
        defer { server.stop() }
        try await server.waitUntilListening()
        return try await body(server)
    }

    private init(skew: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("upstream-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptPath = directory.appendingPathComponent("server.py").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [scriptPath, portFile.path, String(skew)]
        try process.run()
    }

    private var portFile: URL { directory.appendingPathComponent("port") }

    /// The script writes its port once it listens.
    private func waitUntilListening() async throws {
        port = try await portWritten(to: portFile, by: process)
    }

    func stop() {
        stopProcess(process)
        try? FileManager.default.removeItem(at: directory)
    }
}

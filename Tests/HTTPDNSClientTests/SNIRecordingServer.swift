import Foundation
import HTTPDNSTestSupport

/// An HTTPS server on one loopback address (Python's `ssl`) with a certificate for one name from a test
/// CA: it prints each TLS server name (SNI) it is sent, and answers every GET with the Host
/// header it received.
struct SNIRecordingServer {
    let port: UInt16
    let caPath: String
    let process: ChildProcess

    private static let script = #"""
        import http.server, ssl, sys
        address, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.sni_callback = lambda sock, name, ctx: print("sni=%s" % name, flush=True)
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = ("host=%s\n" % self.headers["Host"]).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer((address, port), Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print("sni-server-ready %d" % server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// The names the server was sent as SNI, in order.
    var serverNames: [String] {
        process.output().split(separator: "\n").filter { $0.hasPrefix("sni=") }.map { String($0.dropFirst(4)) }
    }

    /// Starts a server on `address` whose certificate (from a new test CA) names `dnsName` only.
    static func start(dnsName: String, address: String) async throws -> SNIRecordingServer {
        let ca = try await TestCertificates.make()
        let directory = ca.directory
        try "subjectAltName=DNS:\(dnsName)\n".write(to: directory.appendingPathComponent("name.ext"), atomically: true, encoding: .utf8)
        for arguments in [
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "name.key", "-out", "name.csr",
                "-subj", "/CN=\(dnsName)",
            ],
            [
                "x509", "-req", "-in", "name.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "0x2001", "-days", "2",
                "-extfile", "name.ext", "-out", "name.pem",
            ],
        ] {
            let (status, output) = try await ExternalTool.run("openssl", arguments, in: directory)
            guard status == 0 else { throw HarnessError("openssl \(arguments[0]) failed: \(output)") }
        }
        // The server binds port 0 and says which port it got: a port picked beforehand could be
        // taken by another process before the server binds it.
        let process = try await ChildProcess.launch(
            name: "sni-server", executable: "/usr/bin/python3",
            arguments: [
                "-c", script, address, "0", directory.appendingPathComponent("name.pem").path,
                directory.appendingPathComponent("name.key").path,
            ],
            environment: TestPaths.childEnvironment(), logURL: directory.appendingPathComponent("sni-server.log"))
        do {
            return SNIRecordingServer(port: try await readyPort(of: process), caPath: ca.caPath, process: process)
        } catch {
            await process.kill()
            throw error
        }
    }

    /// The port of the script's own line saying it listens (not a word inside an error); throws
    /// when the script exits first or after 30 s.
    private static func readyPort(of process: ChildProcess) async throws -> UInt16 {
        var port: UInt16?
        let ready = try await Poll.until(limit: 30) {
            let line = process.output().split(separator: "\n").first { $0.hasPrefix("sni-server-ready ") }
            port = line.flatMap { UInt16($0.dropFirst("sni-server-ready ".count)) }
            if port != nil { return true }
            guard process.isRunning else { throw HarnessError("the HTTPS test server exited:\n\(process.output())") }
            return false
        }
        guard ready, let port else { throw HarnessError("the HTTPS test server did not start:\n\(process.output())") }
        return port
    }
}

import Foundation
import HTTPDNSTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// HTTPS on the main listener (`tlsCert`/`tlsKey`), with a CA and certificates made by `openssl`
/// for each test; the harness waits for readiness on the plain listener (`listenPlain`).
@Suite("HTTPS listener")
struct TLSListenerTests {
    /// Runs `body` with httpdnsd serving HTTPS on the returned port with `certificate`/`key`.
    func withTLSService(
        certificate: String, key: String, arguments: [String] = [], _ body: (HTTPDNSDProcess, UInt16) async throws -> Void
    ) async throws {
        try await withService(configure: { _, options in
            options.harnessListen = ("--listen-plain", "HTTPDNS_LISTEN_PLAIN")
            options.listen("--listen", port: "https")
            options.arguments += ["--tls-cert", certificate, "--tls-key", key] + arguments
        }) { _, service in
            try await body(service, try service.port(named: "https"))
        }
    }

    func curl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ExternalTool.run("curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"] + arguments, timeout: 20)
    }

    /// The certificate watcher and the connection reaper name themselves, so `top -H` and gdb
    /// show them (a name set before a thread starts, or one over 15 characters, never reaches
    /// `/proc/PID/task/TID/comm`).
    @Test func theWatcherAndReaperThreadsCarryTheirNames() async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue("server", serial: "1003")
        try await withTLSService(certificate: certificate, key: key) { service, _ in
            // The threads name themselves once they run: wait for that (a hang guard, not a timing check).
            let deadline = Date().addingTimeInterval(20)
            func names() -> [String] {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(service.pid)/task")) ?? []
                return tasks.compactMap { try? String(contentsOfFile: "/proc/\(service.pid)/task/\($0)/comm", encoding: .utf8) }
                    .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            }
            while !(names().contains("httpdnsd-tls") && names().contains("httpdnsd-reaper")) && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(names().contains("httpdnsd-tls"), "\(names())")
            #expect(names().contains("httpdnsd-reaper"), "\(names())")
        }
    }

    /// The log names the certificate's expiry as ISO 8601 UTC, the instant `openssl x509
    /// -enddate` gives, not as a Unix time.
    @Test func theLogGivesTheCertificateExpiryInISO8601UTC() async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue("server", serial: "1004")
        let (status, output) = try await ExternalTool.run(
            "openssl", ["x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in", certificate])
        let end = try #require(output.firstMatch(of: #/notAfter=(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})Z/#), "\(status): \(output)")
        try await withTLSService(certificate: certificate, key: key) { service, _ in
            let line = try #require(service.log().split(separator: "\n").first { $0.contains("TLS: serving certificate serial") })
            #expect(line.contains("expires at \(end.1)T\(end.2)Z"), "\(line)")
            #expect(!line.contains("Unix time"), "\(line)")
        }
    }

    @Test func handshakeVerifiesAgainstTheCAAndTheHostName() async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue("server", serial: "1001")
        try await withTLSService(certificate: certificate, key: key) { service, port in
            let good = try await curl([
                "--cacert", certificates.caPath, "https://localhost:\(port)/v1/default/resolve?host=\(TestZone.www)",
            ])
            #expect(good.status == 0 && good.output == "200", "\(good)")
            // The same server reached under a name its certificate does not carry.
            let otherName = try await curl([
                "--cacert", certificates.caPath, "--resolve", "elsewhere.test:\(port):127.0.0.1",
                "https://elsewhere.test:\(port)/healthz",
            ])
            #expect(otherName.status == 60, "a certificate for another name must fail verification: \(otherName)")
            // Without the CA the chain is not trusted.
            let untrusted = try await curl(["https://localhost:\(port)/healthz"])
            #expect(untrusted.status == 60, "\(untrusted)")
            // The plain listener serves the same API.
            #expect(try await service.client.get("/v1/default/resolve?host=\(TestZone.www)").status == 200)
        }
    }

    @Test(arguments: [("-tls1", false), ("-tls1_1", false), ("-tls1_2", true), ("-tls1_3", true)])
    func onlyTLS12And13AreAccepted(version: String, accepted: Bool) async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue("server", serial: "1001")
        try await withTLSService(certificate: certificate, key: key) { _, port in
            // SECLEVEL=0 lets this client offer TLS 1.0/1.1 at all: a refusal is the server's.
            let (status, output) = try await ExternalTool.run(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost", version,
                    "-cipher", "DEFAULT:@SECLEVEL=0", "-CAfile", certificates.caPath,
                ], timeout: 20)
            if accepted {
                #expect(status == 0, "\(version) refused: \(output)")
                #expect(output.contains("-----BEGIN CERTIFICATE-----") && output.contains("Verify return code: 0 (ok)"), "\(output)")
            } else {
                #expect(status != 0, "\(version) was accepted: \(output)")
                #expect(!output.contains("-----BEGIN CERTIFICATE-----"), "the server sent its certificate: \(output)")
            }
        }
    }

    @Test func rotationServesTheNewCertificateToNewHandshakesWhileAnOpenConnectionKeepsWorking() async throws {
        let certificates = try await TestCertificates.make()
        let first = try await certificates.issue("first", serial: "1001")
        let second = try await certificates.issue("second", serial: "1002")
        let live = (
            certificates.directory.appendingPathComponent("live.pem").path,
            certificates.directory.appendingPathComponent("live.key").path
        )
        try install(first, as: live)
        // The client's connection idles while the rotation is checked: an idle limit of an hour
        // keeps it open however long a loaded machine takes over that (the default is 30 s).
        try await withTLSService(certificate: live.0, key: live.1, arguments: ["--connection-timeout", "3600"]) { service, port in
            #expect(try await certificates.servedSerial(port: port) == "1001")
            let state = try TestPaths.makeTemporaryDirectory("tls-client")
            let client = try await ChildProcess.launch(
                name: "tls-client", executable: try TestPaths.executable("python3"),
                arguments: [
                    TestPaths.packageRoot.appendingPathComponent("scripts/test/tls_keepalive_client.py").path,
                    String(port), certificates.caPath, state.path,
                ],
                environment: TestPaths.childEnvironment(), logURL: state.appendingPathComponent("client.log"))
            defer { Task { await client.kill() } }
            let firstAnswer = try await waitForJSON(state.appendingPathComponent("first.json"))
            #expect(firstAnswer["status"] as? Int == 200, "\(firstAnswer)")
            #expect(firstAnswer["serial"] as? String == "1001", "\(firstAnswer)")

            // Rotate (files replaced, then SIGHUP): new handshakes get the new certificate.
            try install(second, as: live)
            service.send(signal: SIGHUP)
            #expect(try await waitForServedSerial("1002", certificates: certificates, port: port), "\(service.log())")

            // The connection opened before the rotation still answers, with its own session.
            _ = FileManager.default.createFile(atPath: state.appendingPathComponent("go").path, contents: Data())
            let secondAnswer = try await waitForJSON(state.appendingPathComponent("second.json"))
            #expect(secondAnswer["status"] as? Int == 200, "\(secondAnswer)")
            #expect(secondAnswer["serial"] as? String == "1001", "\(secondAnswer)")

            // A key that does not match the certificate is refused and the current pair kept.
            try install((first.certificate, second.key), as: live)
            service.send(signal: SIGHUP)
            try await waitForLog(service, containing: "new certificate refused")
            #expect(try await certificates.servedSerial(port: port) == "1002")

            // A change of the files alone (no signal) is picked up by the watcher.
            try install(first, as: live)
            #expect(try await waitForServedSerial("1001", certificates: certificates, port: port), "\(service.log())")
        }
    }

    @Test func badTLSSettingsStopTheStartNamingTheSetting() async throws {
        let certificates = try await TestCertificates.make()
        let first = try await certificates.issue("first", serial: "1001")
        let second = try await certificates.issue("second", serial: "1002")
        let notPEM = certificates.directory.appendingPathComponent("not.pem").path
        try "hello\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
        let missing = certificates.directory.appendingPathComponent("missing.pem").path
        let cases: [([String], String, String)] = [
            (["--tls-cert", first.certificate], "tlsKey", "set both or neither"),
            (["--tls-key", first.key], "tlsCert", "set both or neither"),
            (["--tls-cert", missing, "--tls-key", first.key], "tlsCert", "'\(missing)' does not exist"),
            (["--tls-cert", notPEM, "--tls-key", first.key], "tlsCert", "not a PEM certificate"),
            (["--tls-cert", first.certificate, "--tls-key", notPEM], "tlsKey", "not a PEM private key"),
            (["--tls-cert", first.certificate, "--tls-key", second.key], "tlsKey", "not the private key"),
        ]
        for (arguments, key, message) in cases {
            let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: arguments)
            #expect(status == 2, "\(arguments): \(output)")
            #expect(output.contains(key) && output.contains(message), "\(arguments): \(output)")
        }
    }

    // MARK: Helpers

    /// Copies a pair over the live files the way a rotation does: each file written beside and
    /// renamed into place.
    func install(_ pair: (certificate: String, key: String), as live: (String, String)) throws {
        for (source, target) in [(pair.certificate, live.0), (pair.key, live.1)] {
            let staged = target + ".new"
            try? FileManager.default.removeItem(atPath: staged)
            try FileManager.default.copyItem(atPath: source, toPath: staged)
            guard rename(staged, target) == 0 else { throw HarnessError("rename \(staged) failed: \(errno)") }
        }
    }

    func waitForJSON(_ url: URL, timeout: Double = 30) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let data = try? Data(contentsOf: url), let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
                return object
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("\(url.lastPathComponent) not written within \(timeout) s")
    }

    func waitForServedSerial(_ serial: String, certificates: TestCertificates, port: UInt16, timeout: Double = 30) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try await certificates.servedSerial(port: port) == serial { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        return false
    }

    func waitForLog(_ service: HTTPDNSDProcess, containing text: String, timeout: Double = 15) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if service.log().contains(text) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError("no log line with '\(text)' within \(timeout) s: \(service.log().suffix(2000))")
    }
}

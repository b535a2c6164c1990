import Foundation
import HTTPDNSTestSupport
import Testing

/// The TLS + HTTP/2 front of the deploy examples (deploy/haproxy.cfg, run as shipped but on
/// loopback with a test certificate) in front of httpdnsd, which trusts it as a proxy: HTTP/2
/// DoH clients (`kdig +https`, which refuses HTTP/1.1, and `curl --http2`) get their answers,
/// and httpdnsd answers for the address the client connected to haproxy from.
@Suite("HTTP/2 front")
struct HTTP2FrontTests {
    /// httpdnsd (default account with `ispEnable`, so a request's client network shows in its
    /// cache; `trustedProxies` 127.0.0.1) behind the deploy front; `body` gets the front's TLS
    /// port and the CA file.
    private func withFront(_ body: (HTTPDNSDProcess, UInt16, String) async throws -> Void) async throws {
        let certificates = try await TestCertificates.make()
        // tls.crt beside tls.key, as the deploy examples mount a TLS Secret.
        let (pem, _) = try await certificates.issue("tls", serial: "2601")
        let certificate = certificates.directory.appendingPathComponent("tls.crt").path
        try FileManager.default.copyItem(atPath: pem, toPath: certificate)
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers, ["ispEnable": true])]]
            options.arguments += ["--trusted-proxies", "127.0.0.1"]
        }) { _, service in
            let haproxy = try await HaproxyProcess.start(backends: [service.port], portCount: 2) { ports in
                try DeployHaproxy.loopback(plainPort: ports[0], dohPort: ports[1], certificate: certificate, backends: [service.port])
            }
            do {
                try await body(service, haproxy.ports[1], certificates.caPath)
                await haproxy.stop()
            } catch {
                Issue.record("haproxy log:\n\(haproxy.log().suffix(3000))")
                await haproxy.stop()
                throw error
            }
        }
    }

    /// The client networks of the default account's cache entries for `name`.
    private func networks(_ service: HTTPDNSDProcess, _ name: String) async throws -> [String] {
        let list = try await service.client.get("/v1/default/cache?limit=1000").json
        return (list["entries"]?.array ?? []).filter { $0["host"]?.string == name }.compactMap { $0["network"]?.string }
    }

    @Test func kdigOverHTTP2GetsTheAnswerForItsOwnAddress() async throws {
        try await withFront { service, port, ca in
            let name = TestZone.unique("h2")
            let (status, output) = try await ExternalTool.run(
                "kdig",
                [
                    "@127.0.0.1", "-p", "\(port)", "-b", "127.0.5.9", "+https", "+tls-ca=\(ca)", "+tls-hostname=localhost",
                    "+timeout=5", "+retry=0", name, "A",
                ], timeout: 20)
            #expect(status == 0, "\(output)")
            #expect(output.contains(";; HTTP session (HTTP/2-"), "\(output)")
            #expect(output.contains("status: NOERROR"), "\(output)")
            for address in TestZone.wildV4 {
                #expect(output.contains("A\t\(address)") || output.contains(" A \(address)"), "\(address) in \(output)")
            }
            // The client's address came through X-Forwarded-For: its network keys the entry.
            #expect(try await networks(service, name) == ["127.0.5.0/24"])
        }
    }

    @Test func curlOverHTTP2GetsDoHJSONAndAForgedForwardedForIsNotBelieved() async throws {
        try await withFront { service, port, ca in
            let name = TestZone.unique("h2json")
            let (status, output) = try await ExternalTool.run(
                "curl",
                [
                    "-sS", "--http2", "--cacert", ca, "--interface", "127.0.6.9", "-H", "Accept: application/dns-json",
                    "-H", "X-Forwarded-For: 198.51.100.1", "-w", "\\nHTTP/%{http_version} %{http_code}",
                    "https://localhost:\(port)/resolve?name=\(name)&type=A",
                ], timeout: 20)
            #expect(status == 0, "\(output)")
            let lines = output.split(separator: "\n").map(String.init)
            #expect(lines.last == "HTTP/2 200", "\(output)")
            let json = try TestJSON(parsing: Array((lines.first ?? "").utf8))
            #expect(json["Status"]?.int == 0, "\(output)")
            let data = (json["Answer"]?.array ?? []).compactMap { $0["data"]?.string }
            #expect(Set(data) == Set(TestZone.wildV4), "\(output)")
            // haproxy appended the real address after the forged one; httpdnsd took the real one.
            #expect(try await networks(service, name) == ["127.0.6.0/24"])
        }
    }
}

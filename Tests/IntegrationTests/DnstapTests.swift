import Foundation
import HTTPDNSTestSupport
import Testing

/// The query log streamed as dnstap to a real collector: Debian's `fstrm_capture` (libfstrm's
/// own reader) writes what httpdnsd sends to a file, and `dnstap-ldns` reads the file back.
@Suite("dnstap")
struct DnstapTests {
    @Test func loggedLookupsReachAFrameStreamsCollectorAsDnstap() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("dnstap")
        let socket = directory.appendingPathComponent("tap.sock").path, capture = directory.appendingPathComponent("tap.fstrm").path
        let collector = try await ChildProcess.launch(
            name: "fstrm_capture", executable: try TestPaths.executable("fstrm_capture"),
            arguments: ["-t", "protobuf:dnstap.Dnstap", "-u", socket, "-w", capture], environment: TestPaths.childEnvironment([:]),
            logURL: directory.appendingPathComponent("fstrm_capture.log"))
        defer { Task { await collector.stop() } }
        let listening = try await poll(for: 10, every: .milliseconds(50)) { FileManager.default.fileExists(atPath: socket) ? true : nil }
        #expect(listening == true, "fstrm_capture never listened: \(collector.output())")

        let logged = TestZone.unique("tap"), quiet = TestZone.unique("untapped")
        try await withService(configure: { servers, options in
            options.arguments += ["--dnstap-socket", socket]
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers, ["queryLog": ["enabled": true, "clientPrefixV4": 16]]),
                    "quiet": loopbackAccount(servers),
                ]
            ]
        }) { _, service in
            #expect(try await service.client.get("/v1/default/resolve?host=\(logged)&type=A").status == 200)
            #expect(try await service.client.get("/v1/quiet/resolve?host=\(quiet)&type=A").status == 200)
            let sent = try await poll(for: 20, every: .milliseconds(100)) { () -> Double? in
                let value = try await service.metrics().sum("httpdns_dnstap_frames_total", ["result": "sent"])
                return value >= 1 ? value : nil
            }
            #expect(sent == 1)
            // A graceful stop flushes the stream (libfstrm's writer ends it with a STOP frame).
            #expect(await service.stop() == 0)
        }
        await collector.stop()
        let decoded = try await ExternalTool.run("dnstap-ldns", ["-r", capture, "-y"])
        #expect(decoded.status == 0, "\(decoded.output)")
        #expect(decoded.output.contains("type: CLIENT_RESPONSE"), "\(decoded.output)")
        #expect(decoded.output.contains(";\(logged).\tIN\tA"), "\(decoded.output)")
        #expect(decoded.output.contains("query_address: \"127.0.0.0\""), "the client masked as the log keeps it: \(decoded.output)")
        #expect(!decoded.output.contains(quiet), "an account without the query log is not streamed")
    }

    @Test func aSocketPathThatIsNotAbsoluteIsRefusedAtStartUp() async throws {
        let run = try await HTTPDNSDProcess.runOnce(arguments: ["--dnstap-socket", "relative.sock"])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("--dnstap-socket: must be an absolute path"), "\(run.output)")
    }
}

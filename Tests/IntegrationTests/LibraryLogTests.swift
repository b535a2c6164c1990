import Foundation
import HTTPDNSTestSupport
import Testing

/// libmicrohttpd's own messages go through the service's log, throttled: one line per kind of
/// message every 10 s at most, however many connections cause it.
@Suite("libmicrohttpd's log lines")
struct LibraryLogTests {
    // The limit covers the wait for the shared test servers' gate too, which a loaded machine
    // stretches to minutes (a full run with one extra busy process: past five) while the test
    // itself takes 5-20 s: the limit only catches a hang, as SlowClientTests' do.
    @Test(.timeLimit(.minutes(10)))
    func abortedSlowConnectionsWriteABoundedNumberOfLogLines() async throws {
        try await withService(configure: { _, options in
            options.arguments += ["--request-read-timeout", "1"]
        }) { _, service in
            let directory = try TestPaths.makeTemporaryDirectory("library-log")
            let out = directory.appendingPathComponent("result.json")
            let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/slow_clients.py").path
            // 40 connections (under the per-address limit) send a request head that never ends;
            // each is cut at the read deadline, and libmicrohttpd has something to say about each.
            let (status, output) = try await ExternalTool.run(
                "python3", [script, String(service.port), "127.0.0.2", "40", "0.5", "4", out.path], timeout: 60, in: directory)
            #expect(status == 0, "\(output)")
            let result = try JSONDecoder().decode(SlowClientTests.AttackResult.self, from: Data(contentsOf: out))
            #expect(result.closed >= 30, "the connections were not cut: \(result)")
            let lines = service.log().split(separator: "\n").filter { $0.contains("libmicrohttpd:") }
            print("slow clients: \(result); libmicrohttpd lines: \(lines.count)\n" + lines.joined(separator: "\n"))
            #expect(!lines.isEmpty, "libmicrohttpd said nothing about \(result.closed) cut connections")
            #expect(lines.count <= 4, "one line per cut connection is not throttled:\n\(lines.joined(separator: "\n"))")
        }
    }
}

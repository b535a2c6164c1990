import Foundation
import HTTPDNSTestSupport

/// `scripts/test/dot_client.py` (dnspython's `dns.query.tls` over Python's ssl module) and
/// `kdig +tls`: DNS over TLS clients nobody here wrote, verifying the listener's certificate
/// against the test CA for the server name they send.
struct DoTTestClient {
    struct Reply: CustomStringConvertible {
        var queryID: Int
        var id: Int
        var rcode: String
        var answer: [(type: String, data: String)]
        /// The place the reply came in on its connection (0 first).
        var arrival: Int
        var description: String { "\(rcode) id \(id)/\(queryID) #\(arrival) \(answer)" }
    }

    var port: UInt16
    var caPath: String

    /// Asks `queries` (`NAME/TYPE`) over one connection to `serverName`: in turn, or all
    /// written before any reply is read (`pipeline`). `source`: the client's address.
    func ask(_ queries: [String], serverName: String, pipeline: Bool = false, source: String? = nil) async throws -> [Reply] {
        var arguments = queries.flatMap { ["--query", $0] }
        if pipeline { arguments.append("--pipeline") }
        if let source { arguments += ["--source", source] }
        let lines = try await run(arguments, serverName: serverName, expecting: queries.count)
        return lines.map { json in
            Reply(
                queryID: json["query_id"]?.int ?? -1, id: json["id"]?.int ?? -2, rcode: json["rcode"]?.string ?? "",
                answer: (json["answer"]?.array ?? []).map { ($0["type"]?.string ?? "", $0["data"]?.string ?? "") },
                arrival: json["arrival"]?.int ?? -1)
        }
    }

    /// Asks `query`, then stays silent: the seconds until the listener closed the connection
    /// (nil: still open after `wait` seconds).
    func idleClose(_ query: String, serverName: String, wait: Double) async throws -> Double? {
        let lines = try await run(["--query", query, "--idle", "--wait", String(wait)], serverName: serverName, expecting: 2)
        return lines[1]["closed_after"]?.double
    }

    /// Tries a handshake offering TLS 1.1 at most: "ok" or "failed", and the error.
    func handshake(maxVersion: String, serverName: String) async throws -> (outcome: String, error: String) {
        let lines = try await run(["--max-version", maxVersion], serverName: serverName, expecting: 1)
        return (lines[0]["handshake"]?.string ?? "", lines[0]["error"]?.string ?? "")
    }

    /// `kdig +tls` for `name`/`type` with `serverName` as the verified host name and SNI:
    /// the status line's rcode and the answer section's data.
    func kdig(_ name: String, _ type: String, serverName: String) async throws -> (rcode: String, answers: [String], output: String) {
        let (status, output) = try await ExternalTool.run(
            "kdig",
            [
                "@127.0.0.1", "-p", String(port), "+tls", "+tls-ca=\(caPath)", "+tls-hostname=\(serverName)",
                "+tls-sni=\(serverName)", "+time=5", "+retry=0", "+noall", "+header", "+answer", name, type,
            ], timeout: 20)
        guard status == 0, let rcode = output.firstMatch(of: #/status: ([A-Z]+)/#)?.1 else {
            throw HarnessError("kdig failed (\(status)): \(output)")
        }
        let answers = output.split(separator: "\n").filter { !$0.hasPrefix(";") && !$0.isEmpty }
            .compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).last.map(String.init) }
        return (String(rcode), answers, output)
    }

    private func run(_ extra: [String], serverName: String, expecting count: Int) async throws -> [TestJSON] {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/dot_client.py").path
        let arguments = [script, "--port", String(port), "--ca", caPath, "--server-name", serverName] + extra
        let (status, output) = try await ExternalTool.run("python3", arguments, timeout: 60)
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("{") }
        guard status == 0, lines.count == count else { throw HarnessError("dot_client.py failed (status \(status)): \(output)") }
        return try lines.map { try TestJSON(parsing: Array($0.utf8)) }
    }
}

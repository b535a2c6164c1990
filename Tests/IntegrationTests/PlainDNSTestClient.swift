import Foundation
import HTTPDNSTestSupport

/// `scripts/test/dns_client.py`: plain DNS queries by dnspython's UDP and TCP clients
/// (`dns.query.udp`, `dns.query.tcp`), clients nobody here wrote; dnspython itself refuses a
/// reply whose ID or question does not match the query.
struct PlainDNSTestClient {
    struct Reply: CustomStringConvertible {
        var queryID: Int
        var id: Int
        var rcode: String
        var truncated: Bool
        /// (type, data) of each answer record.
        var answer: [(type: String, data: String)]
        var description: String { "\(rcode) id \(id)/\(queryID) tc \(truncated) \(answer)" }
    }

    var port: UInt16

    /// Asks each of `queries` (`NAME/TYPE`) in order: over UDP, or all over one TCP connection
    /// (`tcp`). `raw` is sent first (a malformed message); `ecs` (`ADDRESS/PREFIX`) and
    /// `payload` (the EDNS UDP size) add an OPT record. `pipeline`: over TCP, every query is
    /// sent before any reply is read; the replies are matched by ID.
    func ask(
        _ queries: [String], tcp: Bool = false, pipeline: Bool = false, raw: [UInt8]? = nil, ecs: String? = nil, payload: Int? = nil
    ) async throws -> [Reply] {
        let python = try TestPaths.executable("python3")
        let directory = try TestPaths.makeTemporaryDirectory("dns-client")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/dns_client.py").path
        var arguments = [script, "--port", String(port)] + queries.flatMap { ["--query", $0] }
        if tcp || pipeline { arguments.append("--tcp") }
        if pipeline { arguments.append("--pipeline") }
        if let raw { arguments += ["--raw-first", raw.map { String(format: "%02x", $0) }.joined()] }
        if let ecs { arguments += ["--ecs", ecs] }
        if let payload { arguments += ["--payload", String(payload)] }
        let process = try await ChildProcess.launch(
            name: "dns_client", executable: python, arguments: arguments, environment: TestPaths.childEnvironment(),
            logURL: directory.appendingPathComponent("dns_client.log"))
        guard await process.waitForExit(timeout: 60) else {
            await process.kill()
            throw HarnessError("dns_client.py did not finish: \(process.output())")
        }
        await process.stop()
        let output = process.output()
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("{") }
        guard process.terminationStatus == 0, lines.count == queries.count else {
            throw HarnessError("dns_client.py failed (status \(String(describing: process.terminationStatus))): \(output)")
        }
        return try lines.map { line in
            let json = try TestJSON(parsing: Array(line.utf8))
            return Reply(
                queryID: json["query_id"]?.int ?? -1, id: json["id"]?.int ?? -2, rcode: json["rcode"]?.string ?? "",
                truncated: json["tc"]?.bool ?? false,
                answer: (json["answer"]?.array ?? []).map { ($0["type"]?.string ?? "", $0["data"]?.string ?? "") })
        }
    }
}

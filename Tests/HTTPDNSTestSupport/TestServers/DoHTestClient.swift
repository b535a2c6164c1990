import Foundation

/// `scripts/test/doh_client.py`: one RFC 8484 query by dnspython's DoH client (`dns.query.https`),
/// a client nobody here wrote. dnspython itself refuses a reply whose ID or question does not
/// match the query.
public struct DoHTestClient: Sendable {
    /// One record of a reply section, as dnspython writes it.
    public struct Record: Sendable, Equatable {
        public var name: String
        public var type: String
        public var ttl: Int
        public var data: String
    }

    /// What dnspython read.
    public struct Reply: Sendable {
        public var queryID: Int
        public var id: Int
        /// `NOERROR`, `NXDOMAIN`, `SERVFAIL`, ...
        public var rcode: String
        public var answer: [Record]
        public var authority: [Record]
    }

    /// The endpoint, e.g. `http://127.0.0.1:PORT/dns-query`.
    public var url: String
    /// A CA file for an `https://` endpoint.
    public var caPath: String?

    public init(url: String, caPath: String? = nil) {
        self.url = url
        self.caPath = caPath
    }

    /// Asks `name`/`type` by GET or POST (`post`), with an EDNS Client Subnet when `ecs` is set.
    public func query(_ name: String, type: String = "A", post: Bool, ecs: String? = nil) async throws -> Reply {
        // The python3 on PATH: the one scripts/install-deps.sh installs dnspython for.
        let python = try TestPaths.executable("python3")
        let directory = try TestPaths.makeTemporaryDirectory("doh")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/doh_client.py").path
        var arguments = [script, "--url", url, "--name", name, "--type", type, "--method", post ? "post" : "get"]
        if let caPath { arguments += ["--cacert", caPath] }
        if let ecs { arguments += ["--ecs", ecs] }
        let process = try await ChildProcess.launch(
            name: "doh_client", executable: python, arguments: arguments, environment: TestPaths.childEnvironment(),
            logURL: directory.appendingPathComponent("doh_client.log"))
        guard await process.waitForExit(timeout: 30) else {
            await process.kill()
            throw HarnessError("doh_client.py did not finish: \(process.output())")
        }
        await process.stop()
        let output = process.output()
        guard process.terminationStatus == 0, let line = output.split(separator: "\n").last,
            let json = try? TestJSON(parsing: Array(line.utf8))
        else {
            throw HarnessError("doh_client.py failed (status \(String(describing: process.terminationStatus))): \(output)")
        }
        let records = { (key: String) in
            (json[key]?.array ?? []).map {
                Record(
                    name: $0["name"]?.string ?? "", type: $0["type"]?.string ?? "", ttl: $0["ttl"]?.int ?? -1,
                    data: $0["data"]?.string ?? "")
            }
        }
        return Reply(
            queryID: json["query_id"]?.int ?? -1, id: json["id"]?.int ?? -2, rcode: json["rcode"]?.string ?? "",
            answer: records("answer"), authority: records("authority"))
    }
}

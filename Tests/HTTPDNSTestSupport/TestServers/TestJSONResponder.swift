import Foundation

/// `scripts/test/json_responder.py`: a DoH JSON API upstream that resolves over real DNS and
/// logs the requests it receives.
public final class TestJSONResponder: Sendable {
    /// One request the responder received.
    public struct RecordedRequest: Sendable {
        public var method: String
        public var path: String
        /// Query parameters (the first value of each).
        public var query: [String: String]
        /// Header fields as sent.
        public var headers: [String: String]
    }

    /// HTTP port on 127.0.0.1.
    public let port: UInt16
    private let process: ChildProcess
    private let client: HTTPClient

    /// `http://127.0.0.1:PORT/resolve`.
    public var resolveURL: String { "http://127.0.0.1:\(port)/resolve" }
    /// The upstream spec for httpdnsd: `json:http://127.0.0.1:PORT/resolve`.
    public var upstreamSpec: String { "json:\(resolveURL)" }
    /// The EMAS HTTPDNS API upstream spec: `httpdns:http://127.0.0.1:PORT` (the client adds `/{account}/d`).
    public var httpdnsUpstreamSpec: String { "httpdns:http://127.0.0.1:\(port)" }

    private init(port: UInt16, process: ChildProcess) {
        self.port = port
        self.process = process
        self.client = HTTPClient(port: port, timeout: 10)
    }

    /// Starts the responder in front of 127.0.0.1:`dnsPort` and waits until it answers.
    /// - Parameters:
    ///   - jsonSecret: when set, `/resolve` demands the Alibaba signature made with this accessKeySecret (403 otherwise).
    ///   - httpdnsSecret: when set, the EMAS API demands `sign_d` signed with this secret key.
    public static func start(
        dnsPort: UInt16, jsonSecret: String? = nil,
        httpdnsSecret: String? = nil
    ) async throws -> TestJSONResponder {
        // The system python, not a version-manager shim (a shim may not pass SIGTERM on).
        let python =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
            ? "/usr/bin/python3" : try TestPaths.executable("python3")
        return try await startRetrying(
            "json responder",
            launch: {
                let directory = try TestPaths.makeTemporaryDirectory("json")
                let port = freePort()
                let process = try await ChildProcess.launch(
                    name: "json_responder", executable: python,
                    arguments: [
                        "-u", TestPaths.jsonResponderScript.path, "--listen-port", String(port),
                        "--dns", "127.0.0.1:\(dnsPort)",
                    ]
                        + (jsonSecret.map { ["--json-secret", $0] } ?? [])
                        + (httpdnsSecret.map { ["--httpdns-secret", $0] } ?? []),
                    environment: TestPaths.childEnvironment(),
                    logURL: directory.appendingPathComponent("json_responder.log"))
                return TestJSONResponder(port: port, process: process)
            },
            ready: { try await $0.waitUntilAnswering() },
            stop: { await $0.stop() })
    }

    /// SIGTERM and wait. Idempotent.
    public func stop() async { await process.stop(timeout: 5) }

    /// True while the responder runs.
    public var isRunning: Bool { process.isRunning }

    /// The responder's output so far.
    public func log() -> String { process.output() }

    /// The `/resolve` requests received so far, oldest first.
    public func requests() async throws -> [RecordedRequest] {
        let response = try await client.get("/_requests")
        guard response.status == 200, let entries = response.json.array else {
            throw HarnessError("json responder /_requests: \(response)")
        }
        return entries.map { entry in
            RecordedRequest(
                method: entry["method"]?.string ?? "",
                path: entry["path"]?.string ?? "",
                query: (entry["query"]?.object ?? [:]).compactMapValues { $0.string },
                headers: (entry["headers"]?.object ?? [:]).compactMapValues { $0.string })
        }
    }

    /// The requests received for `name` (any type): `name=` of the JSON API or `host=` of the EMAS API.
    public func requests(for name: String) async throws -> [RecordedRequest] {
        try await requests().filter { request in
            let asked = request.query["name"] ?? request.query["host"] ?? ""
            return asked.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".")) == name.lowercased()
        }
    }

    /// Forgets the recorded requests.
    public func clearRequests() async throws {
        _ = try await client.delete("/_requests")
    }

    /// Makes every later `/resolve` wait `milliseconds` before answering.
    public func setDelay(milliseconds: Int) async throws {
        let response = try await client.get("/_set?delay_ms=\(milliseconds)")
        guard response.status == 200 else { throw HarnessError("json responder /_set: \(response)") }
    }

    /// Makes every later `/resolve` answer with HTTP `status` (0 restores normal answers).
    public func setHTTPStatus(_ status: Int) async throws {
        let response = try await client.get("/_set?http_status=\(status)")
        guard response.status == 200 else { throw HarnessError("json responder /_set: \(response)") }
    }

    /// What `/resolve` answers with HTTP 200: a real answer, an empty body, or a body that is not JSON.
    public enum ReplyMode: String, Sendable {
        case normal
        case empty
        case garbage
    }

    /// Makes every later `/resolve` (that no `setHTTPStatus` overrides) answer as `mode` says.
    public func setReply(_ mode: ReplyMode) async throws {
        let response = try await client.get("/_set?reply=\(mode.rawValue)")
        guard response.status == 200 else { throw HarnessError("json responder /_set: \(response)") }
    }

    private func waitUntilAnswering() async throws {
        try await process.waitUntilAnswering("/_health", through: client, what: "json responder")
    }
}

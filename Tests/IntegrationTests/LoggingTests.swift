import Foundation
import HTTPDNSTestSupport
import Testing

/// `logFormat`, `logLevel`, `accessLog` and the request id, on the real binary.
@Suite("Logging")
struct LoggingTests {
    /// The JSON objects of the log, one a line; fails on a line that is not one.
    static func jsonObjects(_ log: String) throws -> [[String: Any]] {
        try log.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// The same with every value as text (a number as its digits); fails on a value that is
    /// neither a string nor a number.
    static func jsonLines(_ log: String) throws -> [[String: String]] {
        try jsonObjects(log).map { object in
            try object.mapValues { value in
                if let text = value as? String { return text }
                return "\(try #require(value as? NSNumber, "not a string or a number: \(object)"))"
            }
        }
    }

    /// Whether `value` was a JSON number (not a string of digits).
    static func isJSONNumber(_ value: Any?) -> Bool { value is NSNumber && !(value is String) }

    @Test func jsonLogWithAccessLogGivesOneParsedObjectPerLineWithTheRequestFields() async throws {
        try await withService(configure: { _, options in
            options.arguments += ["--log-format", "json", "--access-log", "true"]
        }) { _, service in
            let host = TestZone.www
            let first = try await service.client.get("/v1/default/resolve?host=\(host)&type=A", headers: ["X-Request-Id": "req-42.a:b"])
            #expect(first.status == 200)
            #expect(first.header("X-Request-Id") == "req-42.a:b")
            let second = try await service.client.get("/v1/default/resolve?host=\(host)&type=A")  // a fast-path hit
            let made = try #require(second.header("X-Request-Id"))
            #expect(made.wholeMatch(of: #/[0-9a-f]{32}/#) != nil, "\(made)")
            let tooLong = String(repeating: "x", count: 129)
            let third = try await service.client.get("/v1/default/resolve?host=\(host)&type=A", headers: ["X-Request-Id": tooLong])
            #expect(third.header("X-Request-Id") != tooLong)
            let unknown = try await service.client.get("/v1/nosuch/resolve?host=\(host)&sign=SECRETSIG&kid=k1&t=99")
            #expect(unknown.status == 404)
            try await waitForLog(service) { $0.contains(unknown.header("X-Request-Id") ?? "-") }

            let lines = try Self.jsonLines(service.log())
            for line in lines {
                #expect(line["time"]?.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/#) != nil, "\(line)")
                #expect(["debug", "info", "warning", "error"].contains(line["level"] ?? ""), "\(line)")
                #expect(line["msg"] != nil)
            }
            let access = lines.filter { $0["request_id"] != nil }
            let miss = try #require(access.first { $0["request_id"] == "req-42.a:b" })
            #expect(miss["method"] == "GET")
            #expect(miss["path"] == "/v1/default/resolve?host=\(host)&type=A")
            #expect(miss["status"] == "200")
            #expect(miss["account"] == "default")
            #expect(miss["source"] == "upstream")
            #expect(miss["peer"] == "127.0.0.1")
            #expect(Int(miss["bytes"] ?? "") == first.body.count)
            #expect(Double(miss["duration_ms"] ?? "") != nil)
            let hit = try #require(access.first { $0["request_id"] == made })
            #expect(hit["source"] == "cache")
            #expect(hit["account"] == "default")
            let refused = try #require(access.first { $0["request_id"] == unknown.header("X-Request-Id") })
            #expect(refused["status"] == "404")
            #expect(refused["path"] == "/v1/nosuch/resolve?host=\(host)")
            #expect(!service.log().contains("SECRETSIG"), "a signature reached the log")
            // Numbers are JSON numbers, so that a log pipeline can compare and sum them.
            let raw = try #require(try Self.jsonObjects(service.log()).first { $0["request_id"] as? String == "req-42.a:b" })
            for key in ["status", "bytes", "duration_ms"] {
                #expect(Self.isJSONNumber(raw[key]), "\(key) is not a JSON number: \(raw)")
            }
            #expect(raw["account"] is String)
        }
    }

    @Test func withoutAccessLogNoRequestLineAndNoRequestID() async throws {
        try await withService { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)", headers: ["X-Request-Id": "abc"])
            #expect(response.status == 200)
            #expect(response.header("X-Request-Id") == nil)
            #expect(!service.log().contains("access GET"))
            // The text format, with milliseconds.
            #expect(service.log().contains(#/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z info httpdnsd listening/#))
        }
    }

    /// The access log's writer thread runs only with `accessLog: true`: without it no line goes
    /// through the thread, and an idle thread started first would take the second malloc arena
    /// ahead of the threads that fill the cache, making the memory per entry vary more (382-445
    /// bytes per entry at 100 000 entries with it, 396-409 without).
    @Test func theLogThreadRunsOnlyWithTheAccessLog() async throws {
        try await withService { _, service in
            #expect(!Self.threadNames(service.pid).contains("httpdnsd-log"), "\(Self.threadNames(service.pid))")
        }
        try await withService(configure: { _, options in
            options.arguments += ["--access-log", "true"]
        }) { _, service in
            // The thread names itself once it runs: wait for that (a hang guard, not a timing check).
            let deadline = Date().addingTimeInterval(20)
            while !Self.threadNames(service.pid).contains("httpdnsd-log") && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(Self.threadNames(service.pid).contains("httpdnsd-log"), "\(Self.threadNames(service.pid))")
        }
    }

    /// The system's names of a process's threads (`/proc/PID/task/TID/comm`).
    static func threadNames(_ pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func theLevelDecidesWhichLinesAreWritten() async throws {
        let dead = ["doh:http://127.0.0.1:\(deadPort())/dns-query"]
        for (level, infoShown, warningShown) in [("warning", false, true), ("error", false, false), ("debug", true, true)] {
            try await withService(
                upstreams: { _ in dead }, localDNSFallback: false,
                configure: { _, options in
                    options.environment["HTTPDNS_LOG_LEVEL"] = level
                }
            ) { _, service in
                let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)")
                #expect([502, 504].contains(response.status))
                if warningShown { try await waitForLog(service) { $0.contains(" warning ") } }
                let log = service.log()
                #expect(log.contains(" info ") == infoShown, "\(level): \(log)")
                #expect(log.contains(" warning ") == warningShown, "\(level): \(log)")
            }
        }
    }

    @Test func debugLevelTracesACacheMissThroughTheUpstreamAndInfoLevelWritesNoDebugLine() async throws {
        for level in ["debug", "info"] {
            try await withService(configure: { _, options in
                options.arguments += ["--log-format", "json", "--log-level", level]
            }) { _, service in
                let host = TestZone.www
                #expect(try await service.client.get("/v1/default/resolve?host=\(host)&type=A").status == 200)
                #expect(try await service.client.get("/v1/default/resolve?host=\(host)&type=A").status == 200)  // a hit
                if level == "debug" { try await waitForLog(service) { $0.contains("resolution finished") } }
                let lines = try Self.jsonLines(service.log())
                let debug = lines.filter { $0["level"] == "debug" }
                guard level == "debug" else {
                    #expect(debug.isEmpty, "\(debug)")
                    return
                }
                func one(_ message: String) throws -> [String: String] {
                    let found = debug.filter { $0["msg"] == message && $0["host"] == host }
                    #expect(found.count == 1, "\(message): \(debug)")
                    return try #require(found.first)
                }
                let miss = try one("cache miss: asking the upstreams")
                #expect(miss["account"] == "default" && miss["type"] == "A")
                let sent = try one("upstream query sent")
                #expect(sent["upstream"]?.hasPrefix("doh:http://127.0.0.1:") == true, "\(sent)")
                let replied = try one("upstream replied")
                #expect(replied["upstream"] == sent["upstream"])
                #expect(replied["outcome"] == "answer" && replied["addresses"] == "2", "\(replied)")
                #expect(Double(replied["seconds"] ?? "").map { $0 >= 0 } == true, "\(replied)")
                let rawReplied = try #require(try Self.jsonObjects(service.log()).first { $0["msg"] as? String == "upstream replied" })
                #expect(Self.isJSONNumber(rawReplied["seconds"]) && Self.isJSONNumber(rawReplied["addresses"]), "\(rawReplied)")
                let finished = try one("resolution finished")
                #expect(finished["outcome"] == "answer" && finished["source"] == "upstream", "\(finished)")
                // The hit went through no upstream: each line above is there once.
            }
        }
    }

    @Test func aForgedNewlineInAPathIsEscapedInTheAccessLog() async throws {
        try await withService(configure: { _, options in options.arguments += ["--access-log", "true"] }) { _, service in
            let forged = "x%0A2026-12-02T00:00:00.000Z%20error%20forged"
            let response = try await service.client.get("/v1/\(forged)/resolve?host=\(TestZone.www)")
            #expect(response.status == 404)
            try await waitForLog(service) { $0.contains("access GET /v1/x") }
            let log = service.log()
            #expect(!log.split(separator: "\n").contains { $0.hasPrefix("2026-12-02T00:00:00.000Z") }, "\(log)")
            #expect(log.contains(#"/v1/x\n2026-12-02T00:00:00.000Z error forged/resolve"#), "\(log)")
        }
    }

    /// Log lines are written by the log's thread: wait (bounded) until `condition` holds.
    func waitForLog(_ service: HTTPDNSDProcess, _ condition: (String) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)  // a hang guard, not a timing assertion
        while !condition(service.log()) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
    }
}

import Foundation
import HTTPDNSTestSupport
import Testing

/// Every counter of the stats record fed by the real event: the JSON responder is made to fail in
/// each way (`/_set`), and the fallback to unbound succeeds or hits a dead port.
@Suite("Stats counters")
struct StatsCountersTests {
    static let errorCounters = [
        "timeoutErro", "noResponseErro", "noPermissionErro", "urlParameterErro", "urlPathErro",
        "localErro",
    ]

    /// httpdnsd with the JSON responder as the only upstream of every account: `default` without
    /// fallback (timeout 5 s: every failure below must reach it as the responder's reply, never as
    /// a timeout, also when the loaded machine is slow to run the responder), `fallback` falling
    /// back to unbound, `deadfallback` to a dead port.
    private func withJSONService(_ body: (TestServers, HTTPDNSDProcess) async throws -> Void) async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false,
            configure: { servers, options in
                let json = [servers.json.upstreamSpec]
                options.config = [
                    "accounts": [
                        "default": loopbackAccount(servers, upstreams: json, ["localDNSFallback": false, "timeout": 5]),
                        "fallback": loopbackAccount(servers, upstreams: json, ["localDNSFallback": true]),
                        "deadfallback": loopbackAccount(
                            servers, upstreams: json,
                            [
                                "localDNSFallback": true, "localDNSServers": [.string("127.0.0.1:\(deadPort())")],
                            ]),
                    ]
                ]
            }, body)
    }

    /// Checks that `record` counts one upstream request, no success, `counter` once and the other
    /// error counters never.
    private func expectOnly(
        _ counter: String, in record: TestJSON?, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(record != nil, "no stats record for \(what)", sourceLocation: sourceLocation)
        guard let record else { return }
        #expect(record["requestPDnsNum"]?.int == 1, "\(what): \(record)", sourceLocation: sourceLocation)
        #expect(record["successNum"]?.int == 0, "\(what): \(record)", sourceLocation: sourceLocation)
        for key in Self.errorCounters {
            #expect(
                record[key]?.int == (key == counter ? 1 : 0), "\(what): \(key) in \(record)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func eachKindOfUpstreamFailureFeedsItsOwnCounter() async throws {
        typealias Case = (what: String, counter: String, set: @Sendable (TestJSONResponder) async throws -> Void)
        let cases: [Case] = [
            ("HTTP 400", "urlParameterErro", { try await $0.setHTTPStatus(400) }),
            ("HTTP 401", "noPermissionErro", { try await $0.setHTTPStatus(401) }),
            ("HTTP 403", "noPermissionErro", { try await $0.setHTTPStatus(403) }),
            ("HTTP 404", "urlPathErro", { try await $0.setHTTPStatus(404) }),
            ("HTTP 503", "noResponseErro", { try await $0.setHTTPStatus(503) }),
            ("empty body", "noResponseErro", { try await $0.setReply(.empty) }),
            ("non-JSON body", "noResponseErro", { try await $0.setReply(.garbage) }),
        ]
        try await withJSONService { servers, service in
            for failure in cases {
                let name = TestZone.unique("fail")
                try await failure.set(servers.json)
                let response = try await service.client.get("/v1/default/resolve?host=\(name)&type=A")
                try await servers.json.setHTTPStatus(0)
                try await servers.json.setReply(.normal)
                #expect(response.status == 502, "\(failure.what): \(response)")
                #expect(try await servers.json.requests(for: name).count == 1, "\(failure.what)")
                expectOnly(failure.counter, in: try await statsRecord(service, domain: name), failure.what)
            }

            // An answer later than the account's timeout (5 s).
            let slow = TestZone.unique("slow")
            try await servers.json.setDelay(milliseconds: 8000)
            let timedOut = try await service.client.get("/v1/default/resolve?host=\(slow)&type=A")
            try await servers.json.setDelay(milliseconds: 0)
            #expect(timedOut.status == 504, "\(timedOut)")
            #expect(timedOut.json["error"]?["code"]?.string == "UpstreamTimeout")
            expectOnly("timeoutErro", in: try await statsRecord(service, domain: slow), "timeout")
        }
    }

    @Test func theLocalDNSFallbackCountsGoBacksAndTheirFailures() async throws {
        try await withJSONService { servers, service in
            try await servers.json.setHTTPStatus(503)
            let rescued = TestZone.unique("rescued")
            let answered = try await service.client.get("/v1/fallback/resolve?host=\(rescued)&type=A")
            #expect(answered.status == 200, "\(answered)")
            #expect(answered.json["source"]?.string == "localdns")
            #expect(answered.json["ips"]?.strings == TestZone.wildV4)
            let good = try #require(try await statsRecord(service, account: "fallback", domain: rescued))
            #expect(good["gobackLocaldnsNum"]?.int == 1, "\(good)")
            #expect(good["localErro"]?.int == 0, "\(good)")
            #expect(good["noResponseErro"]?.int == 1, "the upstream's 503 still counts: \(good)")

            let lost = TestZone.unique("lost")
            let failed = try await service.client.get("/v1/deadfallback/resolve?host=\(lost)&type=A")
            #expect([502, 504].contains(failed.status), "\(failed)")
            let bad = try #require(try await statsRecord(service, account: "deadfallback", domain: lost))
            #expect(bad["gobackLocaldnsNum"]?.int == 1, "\(bad)")
            #expect(bad["localErro"]?.int == 1, "\(bad)")
            #expect(bad["successNum"]?.int == 0, "\(bad)")
        }
    }

    @Test func avgRttAndMaxRttMeasureTheUpstreamAnswer() async throws {
        try await withJSONService { servers, service in
            let name = TestZone.unique("rtt")
            try await servers.json.setDelay(milliseconds: 150)
            let response = try await service.client.get("/v1/default/resolve?host=\(name)&type=A")
            try await servers.json.setDelay(milliseconds: 0)
            #expect(response.status == 200, "\(response)")
            let record = try #require(try await statsRecord(service, domain: name))
            #expect(record["successNum"]?.int == 1, "\(record)")
            // Strings of whole milliseconds, at least the responder's delay.
            let average = try #require(record["avgRtt"]?.string.flatMap { Int($0) }, "\(record)")
            let maximum = try #require(record["maxRtt"]?.string.flatMap { Int($0) }, "\(record)")
            #expect(average >= 140, "\(record)")
            #expect(maximum >= average, "\(record)")
        }
    }
}

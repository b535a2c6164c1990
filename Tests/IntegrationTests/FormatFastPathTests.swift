import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// Cache hits of every wire format against the real binary, unbound and dnss on loopback: a hit
/// of EMAS `/d`, DoH JSON `/resolve` (and `/dns-query` with `Accept: application/dns-json`) and
/// RFC 8484 `GET ?dns=` is answered on the fast path (`httpdns_http_fast_path_total` counts it)
/// with the same bytes as the general path gives the same question (asked with a trailing `/`,
/// which the router serves and the fast path leaves to it); refusals are not answered fast.
@Suite("Fast path of every wire format")
struct FormatFastPathTests {
    private func fastAnswers(_ service: HTTPDNSDProcess) async throws -> Double {
        try await service.metrics().sum("httpdns_http_fast_path_total", ["listener": "main"])
    }

    /// Body, content type and `Cache-Control` of a response: what must be the same on both paths.
    private func answer(_ response: HTTPClientResponse) -> String {
        "\(response.status) \(response.header("Content-Type") ?? "-") \(response.header("Cache-Control") ?? "-") \(response.body)"
    }

    /// Asks `fast` (a path the fast path serves), then `general` (the same question on the
    /// general path), then `fast` again, until both fast answers are the same (a remaining TTL
    /// can tick down between two requests); then the general answer must be that answer too, and
    /// the fast path must have counted exactly the two fast requests.
    private func expectSameAnswerOnBothPaths(
        _ service: HTTPDNSDProcess, fast: String, general: String, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        // The first request may miss (the general path resolves it); from then on it is cached.
        let first = try await service.client.get(fast, headers: headers)
        #expect(first.status == 200, "\(first)", sourceLocation: sourceLocation)
        for _ in 0..<5 {
            let before = try await fastAnswers(service)
            let one = try await service.client.get(fast, headers: headers)
            let other = try await service.client.get(general, headers: headers)
            let two = try await service.client.get(fast, headers: headers)
            let counted = try await fastAnswers(service) - before
            #expect(counted == 2, "\(fast): \(counted) fast answers of 2 hits and 1 general request", sourceLocation: sourceLocation)
            guard answer(one) == answer(two) else { continue }
            #expect(one.status == 200, "\(one)", sourceLocation: sourceLocation)
            #expect(answer(other) == answer(one), "\(fast) vs \(general):\n\(other.text)\n\(one.text)", sourceLocation: sourceLocation)
            return
        }
        Issue.record("the fast answers of \(fast) never repeated", sourceLocation: sourceLocation)
    }

    private func dnsArgument(_ name: String, type: UInt16) throws -> String {
        RFC8484Tests.base64URL(try DNSQueryWriter.query(name: name, type: type, id: 0x5151))
    }

    @Test func eachFormatsHitIsAnsweredFastWithTheGeneralPathsBytes() async throws {
        try await withService { _, service in
            let www = TestZone.www
            try await expectSameAnswerOnBothPaths(service, fast: "/default/d?host=\(www)", general: "/default/d/?host=\(www)")
            try await expectSameAnswerOnBothPaths(
                service, fast: "/default/d?host=\(www)&query=6&ip=192.0.2.8&sdk=x",
                general: "/default/d/?host=\(www)&query=6&ip=192.0.2.8&sdk=x")
            try await expectSameAnswerOnBothPaths(service, fast: "/resolve?name=\(www)", general: "/resolve/?name=\(www)")
            try await expectSameAnswerOnBothPaths(
                service, fast: "/resolve?name=\(www)&type=AAAA&uid=default&short=1",
                general: "/resolve/?name=\(www)&type=AAAA&uid=default&short=1")
            try await expectSameAnswerOnBothPaths(
                service, fast: "/dns-query?name=\(www)", general: "/dns-query/?name=\(www)", headers: ["Accept": "application/dns-json"])
            let dns = try dnsArgument(www, type: 1)
            try await expectSameAnswerOnBothPaths(service, fast: "/dns-query?dns=\(dns)", general: "/dns-query/?dns=\(dns)")
            let dns6 = try dnsArgument(www, type: 28)
            try await expectSameAnswerOnBothPaths(
                service, fast: "/v1/default/dns-query?dns=\(dns6)", general: "/v1/default/dns-query/?dns=\(dns6)")
            // v1 too, through the same mechanism.
            try await expectSameAnswerOnBothPaths(
                service, fast: "/v1/default/resolve?host=\(www)", general: "/v1/default/resolve/?host=\(www)")
        }
    }

    @Test func refusalsOfACachedNameAreNotAnsweredFast() async throws {
        try await withService { _, service in
            let www = TestZone.www
            #expect(try await service.client.get("/default/d?host=\(www)").status == 200)
            let before = try await fastAnswers(service)
            let refused: [(String, Int)] = [
                ("/default/d?host=\(www)&query=5", 400),
                ("/default/sign_d?host=\(www)&t=1&s=00", 403),
                ("/nobody/d?host=\(www)", 403),
                ("/resolve?name=\(www)&type=MX", 400),
                ("/resolve?name=\(www)&short=maybe", 400),
                ("/resolve?name=\(www)&uid=nobody", 404),
                ("/resolve?name=\(www)&ak=k&ts=1&key=00", 403),
                ("/dns-query?dns=AAAA", 400),
                ("/v1/default/dns-query?dns=%2A", 400),
                ("/v1/default/resolve?host=\(www)&hots=1", 400),
            ]
            for (path, status) in refused {
                let response = try await service.client.get(path)
                #expect(response.status == status, "\(path): \(response)")
            }
            #expect(try await fastAnswers(service) == before, "a refused request was answered on the fast path")
        }
    }

    /// API v1's resolve refuses an argument it does not read, naming it; the EMAS and
    /// DoH JSON APIs ignore unknown arguments, as their existing clients send their own.
    @Test func v1RefusesUnknownArgumentsWhileTheCompatibilityAPIsIgnoreThem() async throws {
        try await withService { _, service in
            let www = TestZone.www
            let refused = try await service.client.get("/v1/default/resolve?host=\(www)&hots=\(www)")
            #expect(refused.status == 400, "\(refused)")
            #expect(refused.json["error"]?["code"]?.string == "InvalidParameter")
            #expect(refused.json["error"]?["message"]?.string?.contains("'hots'") == true, "\(refused)")
            #expect(try await service.client.get("/v1/default/resolve?host=\(www)&type=A&short=1&client_ip=192.0.2.1").status == 200)
            #expect(try await service.client.get("/default/d?host=\(www)&platform=android&sdk_version=2.3").status == 200)
            #expect(try await service.client.get("/resolve?name=\(www)&random=7&cd=false").status == 200)
        }
    }
}

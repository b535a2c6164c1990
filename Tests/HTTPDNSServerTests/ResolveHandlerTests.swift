import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `GET /v1/{account}/resolve`: parameters, answer shapes, failures, and when it defers.
@Suite struct ResolveHandlerTests {
    static let path = "/v1/default/resolve"

    @Test func aMissIsDeferredUntilTheUpstreamAnswers() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.11", "127.0.0.12"], ttl: 300)
        fixture.upstream.holdReplies(true)
        let result = fixture.handle(HTTPRequest(method: "GET", path: Self.path, query: ["host": "www.example.test"]))
        guard case .deferred(let start) = result else {
            Issue.record("a cache miss was answered synchronously")
            return
        }
        let box = ResponseBox()
        start { box.append($0) }
        #expect(box.count == 0)
        #expect(fixture.upstream.heldCount == 1)
        fixture.upstream.releaseAll()
        #expect(box.count == 1)
        let exchange = Exchange(.response(box.first!))
        #expect(exchange.status == 200)
        let body = exchange.object
        #expect(body["host"] as? String == "www.example.test")
        #expect(strings(body["ips"]) == ["127.0.0.11", "127.0.0.12"])
        #expect(strings(body["ipsv6"]) == [])
        #expect(number(body["ttl"]) == 300)
        #expect(number(body["origin_ttl"]) == 300)
        #expect(body["source"] as? String == "upstream")
        #expect(body["stale"] as? Bool == false)
        #expect(body["nxdomain"] == nil)
    }

    @Test func aCacheHitIsAnsweredSynchronouslyWithTheRemainingTTL() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.11"], ttl: 300)
        fixture.upstream.holdReplies(true)
        let first = fixture.get(Self.path, ["host": "www.example.test"])
        #expect(first.deferred)
        #expect(first.status == 200)
        fixture.clock.advance(by: 13)
        let second = fixture.get(Self.path, ["host": "www.example.test"])
        #expect(!second.deferred, "a cache hit must not suspend the connection")
        #expect(second.status == 200)
        #expect(second.object["source"] as? String == "cache")
        #expect(number(second.object["ttl"]) == 287)
        #expect(number(second.object["origin_ttl"]) == 300)
        #expect(strings(second.object["ips"]) == ["127.0.0.11"])
        #expect(fixture.upstream.calls("www.example.test") == 1)
    }

    @Test func hostNamesAreNormalisedInTheAnswer() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.11"], ttl: 60)
        let exchange = fixture.get(Self.path, ["host": "WWW.Example.TEST."])
        #expect(exchange.status == 200)
        #expect(exchange.object["host"] as? String == "www.example.test")
    }

    @Test func twentyHostsAreAnsweredAsABatchInRequestOrder() {
        let fixture = ServiceFixture()
        let hosts = (1...20).map { "h\($0).example.test" }
        for (index, host) in hosts.enumerated() {
            fixture.upstream.setAnswer(host, addresses: ["127.0.1.\(index + 1)"], ttl: 60)
        }
        fixture.upstream.holdReplies(true)
        let exchange = fixture.get(Self.path, ["host": hosts.reversed().joined(separator: ",")])
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["host"] as? String } == hosts.reversed())
        #expect(results.map { strings($0["ips"]) ?? [] } == (1...20).reversed().map { ["127.0.1.\($0)"] })
        #expect(fixture.upstream.totalCalls == 20)
        #expect(exchange.box?.count == 1)
    }

    @Test func twentyOneHostsAre400TooManyHostsAndNothingIsAsked() {
        let fixture = ServiceFixture()
        let hosts = (1...21).map { "h\($0).example.test" }
        let exchange = fixture.get(Self.path, ["host": hosts.joined(separator: ",")])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "TooManyHosts")
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func shortGivesABareArrayOfV4ThenV6() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("one.example.test", .a, addresses: ["127.0.0.1", "127.0.0.2"], ttl: 60)
        fixture.upstream.setAnswer("one.example.test", .aaaa, addresses: ["::1"], ttl: 60)
        fixture.upstream.setAnswer("two.example.test", .a, addresses: ["127.0.0.3"], ttl: 60)
        fixture.upstream.setAnswer("two.example.test", .aaaa, addresses: ["::3"], ttl: 60)
        let single = fixture.get(Self.path, ["host": "one.example.test", "type": "both", "short": "1"])
        #expect(single.status == 200)
        #expect(single.json as? [String] == ["127.0.0.1", "127.0.0.2", "::1"])
        let batch = fixture.get(Self.path, ["host": "one.example.test,two.example.test", "type": "both", "short": "1"])
        #expect(batch.json as? [String] == ["127.0.0.1", "127.0.0.2", "::1", "127.0.0.3", "::3"])
    }

    @Test(arguments: [
        // type, ipv6Enable, families asked (A, AAAA)
        ("A", false, true, false), ("A", true, true, false),
        ("AAAA", false, false, true), ("aaaa", true, false, true),
        ("auto", false, true, false), ("auto", true, true, true),
        ("both", false, true, true), ("both", true, true, true),
    ])
    func typeSelectsTheFamiliesAndAutoFollowsIPv6Enable(type: String, ipv6Enable: Bool, askA: Bool, askAAAA: Bool) {
        let fixture = ServiceFixture(config: .test { $0.ipv6Enable = ipv6Enable })
        fixture.upstream.setAnswer("dual.example.test", .a, addresses: ["127.0.0.5"], ttl: 60)
        fixture.upstream.setAnswer("dual.example.test", .aaaa, addresses: ["::5"], ttl: 60)
        let exchange = fixture.get(Self.path, ["host": "dual.example.test", "type": type])
        #expect(exchange.status == 200)
        #expect(strings(exchange.object["ips"]) == (askA ? ["127.0.0.5"] : []))
        #expect(strings(exchange.object["ipsv6"]) == (askAAAA ? ["::5"] : []))
        #expect(fixture.upstream.calls("dual.example.test", .a) == (askA ? 1 : 0))
        #expect(fixture.upstream.calls("dual.example.test", .aaaa) == (askAAAA ? 1 : 0))
    }

    @Test func noTypeMeansAuto() {
        let fixture = ServiceFixture(config: .test { $0.ipv6Enable = true })
        fixture.upstream.setAnswer("dual.example.test", .a, addresses: ["127.0.0.5"], ttl: 60)
        fixture.upstream.setAnswer("dual.example.test", .aaaa, addresses: ["::5"], ttl: 60)
        let exchange = fixture.get(Self.path, ["host": "dual.example.test"])
        #expect(strings(exchange.object["ipsv6"]) == ["::5"])
    }

    @Test(arguments: [[:], ["host": ""], ["type": "A"]])
    func missingHostIs400MissingArgument(query: [String: String]) {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, query)
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "MissingArgument")
    }

    @Test(arguments: [
        "bad..name", "-lead.example.test", "under score!.test", "ok.example.test,bad..name", "ok.example.test,", "é.example.test",
        String(repeating: "a", count: 64) + ".test",
    ])
    func invalidHostIs400InvalidHostAndTheUpstreamIsNeverAsked(host: String) {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("ok.example.test", addresses: ["127.0.0.1"], ttl: 60)
        let exchange = fixture.get(Self.path, ["host": host])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidHost")
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test(arguments: ["MX", "A,MX", "5", "txt"])
    func unknownTypeIs400InvalidParameter(type: String) {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["host": "www.example.test", "type": type])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
        #expect(fixture.upstream.totalCalls == 0)
    }

    /// A cached host is answered before any array is built (the hit path): its other parameters
    /// must still be checked first.
    @Test(arguments: [["type": "MX"], ["short": "2"], ["client_ip": "not-an-ip"]])
    func aBadParameterBesideACachedHostIsStill400(bad: [String: String]) {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.11"], ttl: 300)
        #expect(fixture.get(Self.path, ["host": "www.example.test"]).status == 200)
        let exchange = fixture.get(Self.path, bad.merging(["host": "www.example.test"]) { old, _ in old })
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
        #expect(fixture.get(Self.path, ["host": "www.example.test"]).object["source"] as? String == "cache")
    }

    @Test func clientIPThatIsNotAnAddressIs400InvalidParameter() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["host": "www.example.test", "client_ip": "not-an-ip"])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
    }

    @Test func nxdomainIs200WithEmptyArraysAndNxdomainTrue() {
        let fixture = ServiceFixture()
        fixture.upstream.setReply(
            "gone.example.test", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 20)))
        let exchange = fixture.get(Self.path, ["host": "gone.example.test"])
        #expect(exchange.status == 200)
        #expect(exchange.object["nxdomain"] as? Bool == true)
        #expect(strings(exchange.object["ips"]) == [])
        #expect(strings(exchange.object["ipsv6"]) == [])
        // And it is negative-cached: the next request is a synchronous hit.
        let again = fixture.get(Self.path, ["host": "gone.example.test"])
        #expect(!again.deferred)
        #expect(again.object["nxdomain"] as? Bool == true)
        #expect(again.object["source"] as? String == "cache")
        #expect(fixture.upstream.calls("gone.example.test") == 1)
    }

    @Test func everyUpstreamFailingIs502UpstreamFailed() {
        let fixture = ServiceFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("down.example.test", .a, .transport)
        fixture.upstreams[1].setFailure("down.example.test", .a, .serverFailure)
        let exchange = fixture.get(Self.path, ["host": "down.example.test"])
        #expect(exchange.status == 502)
        #expect(exchange.errorCode == "UpstreamFailed")
        #expect(exchange.errorMessage?.contains("down.example.test") == true)
        #expect(fixture.upstreams[0].calls("down.example.test") == 1)
        #expect(fixture.upstreams[1].calls("down.example.test") == 1)
    }

    @Test func everyUpstreamTimingOutIs504UpstreamTimeout() {
        let fixture = ServiceFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("slow.example.test", .a, .timeout)
        fixture.upstreams[1].setFailure("slow.example.test", .a, .timeout)
        fixture.upstreams[0].holdReplies(true)
        let exchange = fixture.get(Self.path, ["host": "slow.example.test"])
        #expect(exchange.deferred)
        #expect(exchange.status == 504)
        #expect(exchange.errorCode == "UpstreamTimeout")
    }

    @Test func oneTimeoutAndOneRefusalIs502() {
        let fixture = ServiceFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("mixed.example.test", .a, .timeout)
        fixture.upstreams[1].setFailure("mixed.example.test", .a, .transport)
        let exchange = fixture.get(Self.path, ["host": "mixed.example.test"])
        #expect(exchange.status == 502)
        #expect(exchange.errorCode == "UpstreamFailed")
    }

    @Test func theSystemResolverFallbackAnswersWithSourceLocaldns() {
        let fixture = ServiceFixture(config: .test { $0.localDNSFallback = true })
        fixture.upstream.setFailure("fb.example.test", .a, .transport)
        fixture.fallback.setAnswer("fb.example.test", .a, addresses: ["127.0.0.99"], ttl: nil)
        let exchange = fixture.get(Self.path, ["host": "fb.example.test"])
        #expect(exchange.status == 200)
        #expect(exchange.object["source"] as? String == "localdns")
        #expect(strings(exchange.object["ips"]) == ["127.0.0.99"])
    }

    @Test func aFailedHostInABatchGetsAnErrorObjectAndTheOthersTheirAnswers() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("good.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setFailure("bad.example.test", .a, .timeout)
        fixture.upstream.holdReplies(true)
        let exchange = fixture.get(Self.path, ["host": "good.example.test,bad.example.test"])
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.count == 2)
        #expect(results.first?["host"] as? String == "good.example.test")
        #expect(strings(results.first?["ips"]) == ["127.0.0.1"])
        #expect(results.first?["error"] == nil)
        let failed = results.last ?? [:]
        #expect(failed["host"] as? String == "bad.example.test")
        let error = failed["error"] as? [String: Any]
        #expect(error?["code"] as? String == "UpstreamTimeout")
        #expect((error?["message"] as? String)?.isEmpty == false)
        #expect(failed["ips"] == nil)
    }

    @Test func concurrentRequestsForOneNameShareOneUpstreamQuery() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("hot.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.holdReplies(true)
        let boxes = (0..<5).map { _ in ResponseBox() }
        for box in boxes {
            guard
                case .deferred(let start) = fixture.handle(HTTPRequest(method: "GET", path: Self.path, query: ["host": "hot.example.test"]))
            else {
                Issue.record("expected a deferred miss")
                return
            }
            start { box.append($0) }
        }
        #expect(fixture.upstream.heldCount == 1)
        fixture.upstream.releaseAll()
        for box in boxes {
            #expect(box.count == 1)
            #expect(box.first?.status == 200)
        }
    }

    @Test func aHostIsAnsweredWhenOneOfItsFamiliesIs() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("half.example.test", .a, addresses: ["127.0.0.8"], ttl: 60)
        fixture.upstream.setFailure("half.example.test", .aaaa, .timeout)
        let exchange = fixture.get(Self.path, ["host": "half.example.test", "type": "both"])
        #expect(exchange.status == 200)
        #expect(strings(exchange.object["ips"]) == ["127.0.0.8"])
        #expect(strings(exchange.object["ipsv6"]) == [])
    }

    @Test func withSeveralFamiliesTTLIsTheSmallestAndSourceTheLeastCached() {
        let fixture = ServiceFixture()
        fixture.seed([("mix.example.test", .a, fixture.entry(["127.0.0.9"], ttl: 100))])
        fixture.upstream.setAnswer("mix.example.test", .aaaa, addresses: ["::9"], ttl: 600)
        fixture.clock.advance(by: 10)
        let exchange = fixture.get(Self.path, ["host": "mix.example.test", "type": "both"])
        #expect(exchange.status == 200)
        #expect(number(exchange.object["ttl"]) == 90)
        #expect(number(exchange.object["origin_ttl"]) == 100)
        #expect(exchange.object["source"] as? String == "upstream")
    }

    /// openapi.yaml and docs/api.md: "When every resolver failed and an expired entry is cached
    /// it is served with `source: stale`, `stale: true`" (and `ttl` 0) rather than an error.
    @Test func anExpiredAnswerIsServedStaleWhenEveryResolverFails() {
        let fixture = ServiceFixture(config: .test { $0.localDNSFallback = true })
        fixture.seed([("old.example.test", .a, fixture.entry(["127.0.0.40"], ttl: 30))])
        fixture.clock.advance(by: 31)
        fixture.upstream.setFailure("old.example.test", .a, .timeout)
        fixture.fallback.setFailure("old.example.test", .a, .transport)
        let exchange = fixture.get(Self.path, ["host": "old.example.test"])
        #expect(exchange.status == 200, "every resolver failed and the expired entry was not served: \(exchange.text)")
        #expect(strings(exchange.object["ips"]) == ["127.0.0.40"])
        #expect(exchange.object["source"] as? String == "stale")
        #expect(exchange.object["stale"] as? Bool == true)
        #expect(number(exchange.object["ttl"]) == 0)
        #expect(fixture.upstream.calls("old.example.test") == 1)
    }

    @Test func aBatchServesAnExpiredAnswerStaleForTheHostWhoseResolversFail() {
        let fixture = ServiceFixture()
        fixture.seed([("old.example.test", .a, fixture.entry(["127.0.0.40"], ttl: 30))])
        fixture.clock.advance(by: 31)
        fixture.upstream.setFailure("old.example.test", .a, .transport)
        fixture.upstream.setAnswer("new.example.test", addresses: ["127.0.0.41"], ttl: 60)
        let exchange = fixture.get(Self.path, ["host": "new.example.test,old.example.test"])
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.count == 2)
        #expect(results.last?["error"] == nil, "the expired entry was not served: \(exchange.text)")
        #expect(results.last?["source"] as? String == "stale")
        #expect(strings(results.last?["ips"]) == ["127.0.0.40"])
    }
}

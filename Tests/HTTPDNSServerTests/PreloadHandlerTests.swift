import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `POST /v1/{account}/preload`: validation before any resolution, per-host outcomes, and a reply
/// sent only once the answers are durable.
@Suite struct PreloadHandlerTests {
    static let path = "/v1/default/preload"

    func post(_ fixture: ServiceFixture, _ body: String) -> Exchange {
        fixture.send("POST", Self.path, body: Array(body.utf8))
    }

    @Test func theReplyWaitsForThePersistenceFlush() {
        let persistence = ControlledFlushPersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setAnswer("b.example.test", addresses: ["127.0.0.2"], ttl: 60)
        fixture.upstream.holdReplies(true)
        let result = fixture.handle(
            HTTPRequest(method: "POST", path: Self.path, body: Array(#"{"hosts":["a.example.test","b.example.test"]}"#.utf8)))
        guard case .deferred(let start) = result else {
            Issue.record("preload answered before its answers were durable")
            return
        }
        let box = ResponseBox()
        start { box.append($0) }
        #expect(persistence.flushRequests == 0, "flushed before the resolutions finished")
        fixture.upstream.releaseAll()
        #expect(Set(persistence.upserts.map(\.host.value)) == ["a.example.test", "b.example.test"])
        #expect(persistence.pendingFlushCount == 1)
        #expect(box.count == 0, "replied before the flush completed")
        persistence.completeFlushes()
        #expect(box.count == 1)
        let exchange = Exchange(.response(box.first!))
        #expect(exchange.status == 200)
        #expect(number(exchange.object["resolved"]) == 2)
        #expect(number(exchange.object["failed"]) == 0)
    }

    @Test func aStoreThatCannotCommitIsReportedPerHostAndForTheRequestWhileAnsweringFromMemory() throws {
        let persistence = ControlledFlushPersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setFailure("down.example.test", .a, .transport)
        fixture.fallback.setFailure("down.example.test", .a, .transport)
        let result = fixture.handle(
            HTTPRequest(
                method: "POST", path: Self.path, body: Array(#"{"hosts":["a.example.test","down.example.test"],"type":"A"}"#.utf8)))
        guard case .deferred(let start) = result else {
            Issue.record("preload answered before the flush")
            return
        }
        let box = ResponseBox()
        start { box.append($0) }
        persistence.completeFlushes(.failed(reason: "full (SQLite result code 13)"))
        let exchange = Exchange(.response(try #require(box.first)))
        #expect(exchange.status == 200)
        #expect(exchange.object["durable"] as? Bool == false)
        #expect(exchange.object["store_error"] as? String == "full (SQLite result code 13)")
        let results = try #require(exchange.object["results"] as? [[String: Any]])
        #expect(results.map { $0["persisted"] as? Bool } == [false, false])
        #expect(results.first?["ips"] as? [String] == ["127.0.0.1"])  // answered from memory
        #expect(fixture.get("/v1/default/resolve", ["host": "a.example.test", "type": "A"]).object["source"] as? String == "cache")
    }

    @Test func aCommittedPreloadSaysDurableAndPersistedForEveryCachedHostOnly() throws {
        let fixture = ServiceFixture(persistence: RecordingCachePersistence())
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setAnswer("zero.example.test", addresses: ["127.0.0.3"], ttl: 0)
        fixture.upstream.setFailure("down.example.test", .a, .transport)
        fixture.fallback.setFailure("down.example.test", .a, .transport)
        let exchange = fixture.send(
            "POST", Self.path, body: Array(#"{"hosts":["a.example.test","zero.example.test","down.example.test"],"type":"A"}"#.utf8))
        #expect(exchange.object["durable"] as? Bool == true)
        #expect(exchange.object["store_error"] == nil)
        let results = try #require(exchange.object["results"] as? [[String: Any]])
        // A TTL of 0 is not cached, so not persisted; a failed host has nothing to persist.
        #expect(results.map { $0["persisted"] as? Bool } == [true, false, false])
    }

    @Test func answersAlreadyCachedStillWaitForTheFlush() {
        let persistence = ControlledFlushPersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.seed([("a.example.test", .a, fixture.entry(["127.0.0.1"]))])
        let result = fixture.handle(HTTPRequest(method: "POST", path: Self.path, body: Array(#"{"hosts":["a.example.test"]}"#.utf8)))
        guard case .deferred(let start) = result else {
            Issue.record("preload answered before the flush")
            return
        }
        let box = ResponseBox()
        start { box.append($0) }
        #expect(box.count == 0)
        persistence.completeFlushes()
        #expect(box.first?.status == 200)
    }

    @Test func eachHostGetsOkWithAddressesOrAnError() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("good.example.test", .a, addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setAnswer("good.example.test", .aaaa, addresses: ["::1"], ttl: 60)
        fixture.upstream.setFailure("bad.example.test", .a, .transport)
        fixture.upstream.setFailure("bad.example.test", .aaaa, .transport)
        fixture.upstream.setReply("gone.example.test", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        fixture.upstream.setReply("gone.example.test", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        let exchange = post(fixture, #"{"hosts":["good.example.test","bad.example.test","gone.example.test"],"type":"both"}"#)
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["host"] as? String } == ["good.example.test", "bad.example.test", "gone.example.test"])
        guard results.count == 3 else { return }
        #expect(results[0]["ok"] as? Bool == true)
        #expect(strings(results[0]["ips"]) == ["127.0.0.1"])
        #expect(strings(results[0]["ipsv6"]) == ["::1"])
        #expect(results[0]["error"] == nil)
        #expect(results[1]["ok"] as? Bool == false)
        #expect((results[1]["error"] as? [String: Any])?["code"] as? String == "UpstreamFailed")
        #expect(results[1]["ips"] == nil)
        #expect(results[2]["ok"] as? Bool == true)
        #expect(results[2]["nxdomain"] as? Bool == true)
        #expect(number(exchange.object["resolved"]) == 2)
        #expect(number(exchange.object["failed"]) == 1)
    }

    @Test func withIspEnableThePreloadWarmsTheRequestersNetwork() {
        let fixture = ServiceFixture(config: .test { $0.ispEnable = true })
        fixture.upstream.setAnswer("warm.example.test", addresses: ["127.0.0.1"], ttl: 60)
        let preload = fixture.send(
            "POST", Self.path, query: ["client_ip": "198.51.100.7"], body: Array(#"{"hosts":["warm.example.test"],"type":"A"}"#.utf8))
        #expect(preload.status == 200)
        #expect(fixture.engine.cachedEntries().map(\.0.network) == ["198.51.100.0/24"])
        let sameNetwork = fixture.get("/v1/default/resolve", ["host": "warm.example.test", "client_ip": "198.51.100.99"])
        #expect(sameNetwork.object["source"] as? String == "cache")
        let otherNetwork = fixture.get("/v1/default/resolve", ["host": "warm.example.test", "client_ip": "203.0.113.5"])
        #expect(otherNetwork.object["source"] as? String == "upstream")
    }

    @Test func aPreloadWithAnInvalidClientIPIsRejected() {
        let fixture = ServiceFixture()
        let preload = fixture.send("POST", Self.path, query: ["client_ip": "nope"], body: Array(#"{"hosts":["warm.example.test"]}"#.utf8))
        #expect(preload.status == 400)
        #expect(preload.errorCode == "InvalidParameter")
        #expect(fixture.upstream.calls("warm.example.test") == 0)
    }

    @Test func preloadedAnswersAreServedFromTheCache() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("warm.example.test", addresses: ["127.0.0.1"], ttl: 60)
        #expect(post(fixture, #"{"hosts":["warm.example.test"],"type":"A"}"#).status == 200)
        let hit = fixture.get("/v1/default/resolve", ["host": "warm.example.test"])
        #expect(!hit.deferred)
        #expect(hit.object["source"] as? String == "cache")
        #expect(fixture.upstream.calls("warm.example.test") == 1)
    }

    @Test(arguments: [
        #"{"hosts":["ok.example.test","bad..host"]}"#,
        #"{"hosts":["bad..host","ok.example.test"]}"#,
        #"{"hosts":["ok.example.test",42]}"#,
        #"{"hosts":["ok.example.test",""]}"#,
    ])
    func oneInvalidHostRejectsTheWholeRequestBeforeAnythingIsResolved(body: String) {
        let persistence = RecordingCachePersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.upstream.setAnswer("ok.example.test", addresses: ["127.0.0.1"], ttl: 60)
        let exchange = post(fixture, body)
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidHost")
        #expect(fixture.upstream.totalCalls == 0)
        #expect(persistence.operations.isEmpty)
        #expect(fixture.engine.cacheCount == 0)
    }

    @Test func duplicateHostsAreResolvedAndReportedOnce() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        let exchange = post(fixture, #"{"hosts":["a.example.test","A.Example.Test","a.example.test."],"type":"A"}"#)
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["host"] as? String } == ["a.example.test"])
        #expect(fixture.upstream.calls("a.example.test") == 1)
        #expect(number(exchange.object["resolved"]) == 1)
    }

    @Test func moreHostsThanMaxPreloadHostsIs400TooManyHosts() {
        let fixture = ServiceFixture(limits: HTTPDNSService.Limits(maxPreloadHosts: 3))
        let four = post(fixture, #"{"hosts":["a.test","b.test","c.test","d.test"]}"#)
        #expect(four.status == 400)
        #expect(four.errorCode == "TooManyHosts")
        #expect(fixture.upstream.totalCalls == 0)
        let three = post(fixture, #"{"hosts":["a.test","b.test","c.test"]}"#)
        #expect(three.status == 200)
    }

    @Test(arguments: [
        ("{\"hosts\":[", "InvalidBody"),
        ("", "InvalidBody"),
        ("[\"a.test\"]", "InvalidBody"),
        ("\"a.test\"", "InvalidBody"),
        ("{\"hosts\":[\"a.test\"],\"extra\":1}", "InvalidBody"),
        ("{}", "MissingArgument"),
        ("{\"hosts\":[]}", "MissingArgument"),
        ("{\"hosts\":\"a.test\"}", "MissingArgument"),
        ("{\"hosts\":[\"a.test\"],\"type\":\"MX\"}", "InvalidParameter"),
        ("{\"hosts\":[\"a.test\"],\"type\":28}", "InvalidParameter"),
    ])
    func malformedBodiesAre400WithTheirCode(body: String, code: String) {
        let fixture = ServiceFixture()
        let exchange = post(fixture, body)
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == code)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func resolutionsRunWithBoundedConcurrency() {
        let fixture = ServiceFixture(limits: HTTPDNSService.Limits(preloadConcurrency: 2))
        let hosts = (1...7).map { "p\($0).example.test" }
        for host in hosts { fixture.upstream.setAnswer(host, addresses: ["127.0.0.1"], ttl: 60) }
        fixture.upstream.holdReplies(true)
        let body = "{\"hosts\":[\(hosts.map { "\"\($0)\"" }.joined(separator: ","))],\"type\":\"A\"}"
        let result = fixture.handle(HTTPRequest(method: "POST", path: Self.path, body: Array(body.utf8)))
        #expect(fixture.upstream.heldCount == 2)
        let exchange = Exchange(result, releasing: [fixture.upstream])
        #expect(exchange.status == 200)
        #expect(fixture.upstream.totalCalls == 7)
        #expect(fixture.upstream.peakInFlight == 2)
        #expect(number(exchange.object["resolved"]) == 7)
    }

    @Test func theLargestAllowedPreloadCompletes() throws {
        let fixture = ServiceFixture(config: .test { $0.cacheCountLimit = 20_000 })
        let hosts = (0..<10_000).map { "bulk\($0).example.test" }
        fixture.upstream.setUnknownResult(.success(UpstreamAnswer(addresses: ["127.0.4.1"], ttl: 60)))
        let body = "{\"hosts\":[\(hosts.map { "\"\($0)\"" }.joined(separator: ","))],\"type\":\"A\"}"
        let exchange = post(fixture, body)
        #expect(exchange.status == 200)
        #expect(number(exchange.object["resolved"]) == 10_000)
        #expect((exchange.object["results"] as? [Any])?.count == 10_000)
        #expect(fixture.engine.cacheCount == 10_000)
    }
}

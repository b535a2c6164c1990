import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Synchronization
import Testing

/// `HTTPDNSService` behind the real `HTTPServer`: query strings, headers and deferred answers
/// cross the socket as the handlers expect, and `/metrics` counts responses by status.
@Suite(.serialized) struct ServiceOverSocketTests {
    func withService(_ fixture: ServiceFixture, threads: Int = 2, _ body: (UInt16, HTTPServer) throws -> Void) throws {
        let server = HTTPServer(options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: threads, maxBodyBytes: 4096)) {
            [service = fixture.service] in
            service.handle($0)
        }
        fixture.service.attach(server.metrics)
        let port = try server.start()
        defer { server.stop(grace: 0) }
        try body(port, server)
    }

    @Test func aResolveMissIsAnsweredWhenTheUpstreamRepliesFromAnotherThread() throws {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.11"], ttl: 300)
        fixture.upstream.holdReplies(true)
        try withService(fixture, threads: 1) { port, server in
            let slow = try RawHTTPConnection(port: port)
            slow.send("GET", "/v1/default/resolve?host=www.example.test&type=A")
            let deadline = Date().addingTimeInterval(30)
            while fixture.upstream.heldCount == 0 && Date() < deadline { usleep(2_000) }
            try #require(fixture.upstream.heldCount == 1)
            // Meanwhile the only worker thread serves others.
            let health = try RawHTTPConnection(port: port).request("GET", "/healthz")
            #expect(health.status == 200)
            let upstream = fixture.upstream
            let releaser = Thread {
                usleep(100_000); upstream.releaseAll()
            }
            releaser.start()
            let response = try slow.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == ServerResponse.jsonType)
            #expect(response.object["source"] as? String == "upstream")
            #expect(response.object["ips"] as? [String] == ["127.0.0.11"])
            // The hit on the same keep-alive connection comes from the cache.
            let hit = try slow.request("GET", "/v1/default/resolve?host=www.example.test&type=A")
            #expect(hit.object["source"] as? String == "cache")
            // The completion callback may run just after the last byte went out.
            let settled = Date().addingTimeInterval(30)
            while server.requestsInFlight != 0 && Date() < settled { usleep(1_000) }
            #expect(server.requestsInFlight == 0)
        }
    }

    @Test func percentEncodedBatchesAndBearerHeadersReachTheHandlers() throws {
        let fixture = ServiceFixture(adminToken: "tok")
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setAnswer("b.example.test", addresses: ["127.0.0.2"], ttl: 60)
        try withService(fixture) { port, _ in
            let connection = try RawHTTPConnection(port: port)
            let batch = try connection.request("GET", "/v1/default/resolve?host=a.example.test%2Cb.example.test&short=1")
            #expect(batch.status == 200)
            #expect(batch.text == #"["127.0.0.1","127.0.0.2"]"#)
            let denied = try connection.request("GET", "/v1/accounts")
            #expect(denied.status == 401)
            #expect(denied.header("WWW-Authenticate") == "Bearer")
            let allowed = try connection.request("GET", "/v1/accounts", headers: [("Authorization", "Bearer tok")])
            #expect(allowed.status == 200)
            let put = try connection.request(
                "PUT", "/v1/accounts/shop", headers: [("Authorization", "Bearer tok"), ("Content-Type", "application/json")],
                body: Array(#"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false}"#.utf8))
            #expect(put.status == 201)
            let wrongMethod = try connection.request("DELETE", "/v1/default/resolve")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "GET")
        }
    }

    @Test func aPreloadOverTheSocketRepliesAfterTheFlush() throws {
        let persistence = ControlledFlushPersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.upstream.setAnswer("p.example.test", addresses: ["127.0.0.5"], ttl: 60)
        try withService(fixture) { port, _ in
            let connection = try RawHTTPConnection(port: port)
            connection.send(
                "POST", "/v1/default/preload", headers: [("Content-Type", "application/json")],
                body: Array(#"{"hosts":["p.example.test"],"type":"A"}"#.utf8))
            let deadline = Date().addingTimeInterval(30)
            while persistence.pendingFlushCount == 0 && Date() < deadline { usleep(2_000) }
            try #require(persistence.pendingFlushCount == 1)
            usleep(50_000)
            let thread = Thread { persistence.completeFlushes() }
            thread.start()
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.object["resolved"] as? Int == 1)
        }
    }

    @Test func metricsCountResponsesByStatus() throws {
        let fixture = ServiceFixture()
        fixture.service.isReady = true
        try withService(fixture) { port, _ in
            let connection = try RawHTTPConnection(port: port)
            for path in ["/healthz", "/readyz", "/nope", "/nope", "/v1/default/resolve"] {
                _ = try connection.request("GET", path)
            }
            _ = try RawHTTPConnection(port: port).request("POST", "/v1/default/preload", body: Array(repeating: 32, count: 5000))
            let metrics = try connection.request("GET", "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = MetricsText(metrics.text)
            #expect(text.problems.isEmpty, "\(text.problems)")
            #expect(text.sum("httpdns_http_requests_total", ["code": "200"]) == 2)
            #expect(text.sum("httpdns_http_requests_total", ["code": "404"]) == 2)
            #expect(text.sum("httpdns_http_requests_total", ["code": "400"]) == 1)
            #expect(text.sum("httpdns_http_requests_total", ["code": "413"]) == 1)
            let again = MetricsText(try connection.request("GET", "/metrics").text)
            #expect(again.sum("httpdns_http_requests_total", ["code": "200"]) == 3)
        }
    }

    @Test func quiesceRefusesNewConnectionsButServesOpenOnes() throws {
        let fixture = ServiceFixture()
        try withService(fixture) { port, server in
            let open = try RawHTTPConnection(port: port)
            #expect(try open.request("GET", "/healthz").status == 200)
            let listening = TCPSocketTable.listeningSockets(onPort: port)
            try #require(listening.count == 1)
            server.quiesce()
            // Polled, since the socket goes only when its last descriptor is closed (quiesce
            // closes the daemon's before returning). The 30 s limit only guards against a
            // listener that never closes.
            let closed = Poll.untilBlocking(limit: 30, every: .milliseconds(10)) { !TCPSocketTable.anyListens(listening) }
            #expect(closed, "the listening socket still listens 30 s after quiesce")
            #expect(try open.request("GET", "/healthz").status == 200)
        }
    }

    /// Many clients on many connections, hits and misses mixed, upstream answers released from
    /// another thread: every response is the right one for its request.
    @Test func concurrentClientsGetTheirOwnAnswers() throws {
        let fixture = ServiceFixture()
        let hosts = (0..<30).map { "c\($0).example.test" }
        for (index, host) in hosts.enumerated() { fixture.upstream.setAnswer(host, addresses: ["127.0.3.\(index)"], ttl: 60) }
        fixture.upstream.holdReplies(true)
        let stopReleasing = Atomic<Bool>(false)
        let upstream = fixture.upstream
        let releaser = Thread {
            while !stopReleasing.load(ordering: .acquiring) {
                upstream.release()
                usleep(500)
            }
        }
        releaser.start()
        defer { stopReleasing.store(true, ordering: .releasing) }
        try withService(fixture, threads: 2) { port, _ in
            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            for client in 0..<8 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        let connection = try RawHTTPConnection(port: port)
                        for step in 0..<25 {
                            let index = (client * 7 + step * 3) % hosts.count
                            let response = try connection.request("GET", "/v1/default/resolve?host=\(hosts[index])&type=A")
                            let ips = response.object["ips"] as? [String]
                            if response.status != 200 || ips != ["127.0.3.\(index)"] {
                                failures.withLock { $0.append("\(hosts[index]): \(response.status) \(response.text)") }
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("client \(client): \(error)") }
                    }
                }.start()
            }
            #expect(group.wait(timeout: .now() + 20) == .success)
            let seen = failures.withLock { $0 }
            #expect(seen.isEmpty, "\(seen.prefix(5))")
            #expect(fixture.upstream.totalCalls == hosts.count, "single-flight: one upstream query per name")
        }
    }
}

import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// `loop.perform(request)`, with the monotonic time at which the loop thread called the
/// completion: what the loop did, without the time the awaiting task then waits for a thread of
/// the cooperative pool (on two cores, other tests blocking that pool delayed it by seconds).
private func performTimed(_ loop: CurlEventLoop, _ request: HTTPRequest) async -> (Result<HTTPResponse, UpstreamError>, Double) {
    await withCheckedContinuation { continuation in
        loop.perform(request) { continuation.resume(returning: ($0, MonotonicTime.now())) }
    }
}

/// The curl event loop against loopback sockets.
struct CurlEventLoopTests {
    private func perform(_ loop: CurlEventLoop, _ request: HTTPRequest) async -> Result<HTTPResponse, UpstreamError> {
        await awaitResult { loop.perform(request, completion: $0) }
    }

    @Test func silentServerGivesTimeoutAfterRequestTimeout() async throws {
        let listener = try SilentTCPListener()
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let started = MonotonicTime.now()
        let (result, completedAt) = await performTimed(loop, HTTPRequest(url: "http://127.0.0.1:\(listener.port)/", timeoutMilliseconds: 300))
        let elapsed = completedAt - started
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(error.code == .timeout)
        #expect(error.underlying == 28)  // CURLE_OPERATION_TIMEDOUT
        #expect(elapsed >= 0.25 && elapsed < 2)
    }

    @Test func refusedConnectionIsTransportWithCurlCode() async throws {
        let port = try LoopbackDNSServers.freePort()
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let result = await perform(loop, HTTPRequest(url: "http://127.0.0.1:\(port)/", timeoutMilliseconds: 2000))
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport)
        #expect(error.underlying == 7)  // CURLE_COULDNT_CONNECT
    }

    @Test func shutdownFailsRunningTransfersAndLaterRequests() async throws {
        let listener = try SilentTCPListener()
        let loop = CurlEventLoop()
        let request = HTTPRequest(url: "http://127.0.0.1:\(listener.port)/", timeoutMilliseconds: 20_000)
        async let running = performTimed(loop, request)
        try await Task.sleep(for: .milliseconds(150))
        let started = MonotonicTime.now()
        loop.shutdown()
        let (result, completedAt) = await running
        #expect(completedAt - started < 2)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport)
        let after = await perform(loop, request)
        guard case .failure(let late) = after else {
            Issue.record("expected a failure after shutdown")
            return
        }
        #expect(late.code == .transport)
    }

    @Test func responseCarriesStatusHeadersAndBody() async throws {
        try await LoopbackDNSServers.with { servers in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let query = try #require(DNSQueryBuilder.query(host: "www.example.test", family: .a))
            let get = HTTPRequest(
                url: servers.dohURL + "?dns=" + Base64URL.encode(query),
                headers: [HTTPHeader("Accept", "application/dns-message")], timeoutMilliseconds: 3000)
            let response = try await perform(loop, get).get()
            #expect(response.status == 200)
            #expect(response.header("Date") != nil)
            #expect(response.header("content-type") == "application/dns-message")
            #expect(try DNSReplyParser.parse(response.body, family: .a).get().addresses.count == 2)

            // POST of the same message (RFC 8484 §4.1) through the same loop.
            let post = HTTPRequest(
                url: servers.dohURL, method: .post,
                headers: [HTTPHeader("Content-Type", "application/dns-message"), HTTPHeader("Accept", "application/dns-message")],
                body: query, timeoutMilliseconds: 3000)
            let posted = try await perform(loop, post).get()
            #expect(posted.status == 200)
            #expect(try DNSReplyParser.parse(posted.body, family: .a).get().addresses.count == 2)
        }
    }
}

/// Keep-alive connections are reused across transfers.
struct CurlEventLoopReuseTests {
    @Test func sequentialRequestsReuseOneConnection() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            for _ in 0..<20 {
                let request = HTTPRequest(url: server.baseURL + "/resolve?name=www.example.test&type=1", timeoutMilliseconds: 3000)
                let response = try await awaitResult { loop.perform(request, completion: $0) }.get()
                #expect(response.status == 200)
            }
            let stats = try await awaitResult { loop.perform(HTTPRequest(url: server.baseURL + "/connections", timeoutMilliseconds: 3000), completion: $0) }.get()
            #expect(String(decoding: stats.body, as: UTF8.self) == #"{"count": 1}"#)
        }
    }
}

/// A burst of transfers to a plain-http upstream with no open connection goes out at once. With
/// CURLOPT_PIPEWAIT curl held all but the first until that one was answered, waiting for a chance
/// to multiplex that HTTP/1.1 never gives: the whole first burst paid the upstream's latency twice.
struct CurlEventLoopColdBurstTests {
    @Test func concurrentTransfersToAColdPlainHTTPUpstreamAreSentTogether() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let count = 8
            let url = server.baseURL + "/gather?key=\(UInt64.random(in: 0...UInt64.max))&n=\(count)"
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        let result = await awaitResult { loop.perform(HTTPRequest(url: url, timeoutMilliseconds: 8000), completion: $0) }
                        return (try? result.get().status) ?? -1
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // 200 only if all eight were waiting at the upstream at the same time.
            #expect(statuses == Array(repeating: 200, count: count))
        }
    }
}

/// Shutting a loop down from its own completion must not deadlock.
struct CurlEventLoopSelfShutdownTests {
    @Test func shutdownFromACompletionReturns() async throws {
        let port = try LoopbackDNSServers.freePort()
        let loop = CurlEventLoop()
        let result = await awaitResult { (done: @escaping @Sendable (Result<Bool, Never>) -> Void) in
            loop.perform(HTTPRequest(url: "http://127.0.0.1:\(port)/", timeoutMilliseconds: 1000)) { _ in
                loop.shutdown()
                done(.success(true))
            }
        }
        if case .success(let value) = result { #expect(value) }
        loop.shutdown()
    }
}

/// The loop watches sockets through epoll: transfers that wait do not hold up one that is ready,
/// and every waiting transfer still ends at its own timeout.
struct CurlEventLoopManyTransfersTests {
    @Test func aReadyTransferCompletesWhile150OthersWaitAndEachWaiterTimesOutOnce() async throws {
        try await FakeJSONUpstream.with { server in
            let silent = try SilentTCPListener()
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let waiting = HTTPRequest(url: "http://127.0.0.1:\(silent.port)/", timeoutMilliseconds: 2500)
            let started = MonotonicTime.now()
            try await withThrowingTaskGroup(of: Result<HTTPResponse, UpstreamError>.self) { group in
                for _ in 0..<150 {
                    group.addTask { await awaitResult { loop.perform(waiting, completion: $0) } }
                }
                try await Task.sleep(for: .milliseconds(300))
                let fresh = HTTPRequest(url: server.baseURL + "/resolve?name=www.example.test&type=1", timeoutMilliseconds: 3000)
                let freshStarted = MonotonicTime.now()
                let (result, completedAt) = await performTimed(loop, fresh)
                #expect(try result.get().status == 200)
                #expect(completedAt - freshStarted < 1, "a ready transfer waited behind the silent ones")
                var timeouts = 0
                for try await result in group {
                    if case .failure(let error) = result, error.code == .timeout { timeouts += 1 }
                }
                #expect(timeouts == 150)
            }
            let elapsed = MonotonicTime.now() - started
            #expect(elapsed >= 2.4 && elapsed < 6, "the waiters ended after \(elapsed) s, not at their 2.5 s timeout")
        }
    }
}

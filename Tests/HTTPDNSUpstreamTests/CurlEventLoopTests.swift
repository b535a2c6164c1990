import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSUpstream

/// `loop.perform(request)` timed like ``performTimed(_:_:)``, but waiting at most `limit` seconds
/// (polling, so that a transfer that never completes fails the test instead of hanging it): nil
/// when no completion came by then.
private func performTimed(_ loop: CurlEventLoop, _ request: UpstreamHTTPRequest, giveUpAfter limit: Double) async
    -> (Result<UpstreamHTTPResponse, UpstreamError>, Double)?
{
    let outcome = Mutex<(Result<UpstreamHTTPResponse, UpstreamError>, Double)?>(nil)
    loop.perform(request) { result in
        let now = MonotonicTime.now()
        outcome.withLock { $0 = (result, now) }
    }
    let deadline = MonotonicTime.now() + limit
    while MonotonicTime.now() < deadline {
        if let value = outcome.withLock({ $0 }) { return value }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return outcome.withLock { $0 }
}

/// The curl event loop against loopback sockets.
struct CurlEventLoopTests {
    private func perform(_ loop: CurlEventLoop, _ request: UpstreamHTTPRequest) async -> Result<UpstreamHTTPResponse, UpstreamError> {
        await awaitResult { loop.perform(request, completion: $0) }
    }

    @Test func silentServerGivesTimeoutAfterRequestTimeout() async throws {
        let listener = try SilentTCPListener()
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let started = MonotonicTime.now()
        let request = UpstreamHTTPRequest(url: "http://127.0.0.1:\(listener.port)/", timeoutMilliseconds: 300)
        guard let (result, completedAt) = await performTimed(loop, request, giveUpAfter: 60) else {
            Issue.record("no completion within 60 s: the 300 ms timeout was not applied")
            return
        }
        let elapsed = completedAt - started
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(error.code == .timeout)
        #expect(error.underlying == 28)  // CURLE_OPERATION_TIMEDOUT
        // The server never answers: without the 300 ms timeout the transfer would never end. The
        // bounds separate the two by a margin no load closes (never early; far below "never").
        #expect(elapsed >= 0.25 && elapsed < 20, "the transfer ended after \(elapsed) s, not at its 300 ms timeout")
    }

    @Test func refusedConnectionIsTransportWithCurlCode() async throws {
        let port = try LoopbackDNSServers.freePort()
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let result = await perform(loop, UpstreamHTTPRequest(url: "http://127.0.0.1:\(port)/", timeoutMilliseconds: 30_000))
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
        // Half an hour: only the shutdown can end the transfer during the test (a timeout is
        // `.timeout`). The test's own steps run on the cooperative pool, which a loaded `make test`
        // can keep from them for over a minute: a shorter timeout could fire between them.
        let request = UpstreamHTTPRequest(url: "http://127.0.0.1:\(listener.port)/", timeoutMilliseconds: 1_800_000)
        async let running = performTimed(loop, request)
        // Running, not queued: its connection to the silent server exists.
        let connected = await TCPSocketTable.wait {
            !$0.filter { $0.remoteHost == "127.0.0.1" && $0.remotePort == listener.port && $0.state.isOpen }.isEmpty
        }
        #expect(connected, "the transfer never connected")
        loop.shutdown()
        let returnedAt = MonotonicTime.now()
        let (result, completedAt) = await running
        #expect(completedAt <= returnedAt, "shutdown returned before failing the running transfer")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport, "the running transfer ended with \(error), not the shutdown's failure")
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
            let query = DNSQueryBuilder.query(host: HostName("www.example.test")!, family: .a)
            let get = UpstreamHTTPRequest(
                url: servers.dohURL + "?dns=" + Base64URL.encode(query),
                headers: [HTTPHeader("Accept", "application/dns-message")], timeoutMilliseconds: 30_000)
            let response = try await perform(loop, get).get()
            #expect(response.status == 200)
            #expect(response.header("Date") != nil)
            #expect(response.header("content-type") == "application/dns-message")
            #expect(try DNSReplyParser.parse(response.body, family: .a).get().addresses.count == 2)

            // POST of the same message (RFC 8484 §4.1) through the same loop.
            let post = UpstreamHTTPRequest(
                url: servers.dohURL, method: .post,
                headers: [HTTPHeader("Content-Type", "application/dns-message"), HTTPHeader("Accept", "application/dns-message")],
                body: query, timeoutMilliseconds: 30_000)
            let posted = try await perform(loop, post).get()
            #expect(posted.status == 200)
            #expect(try DNSReplyParser.parse(posted.body, family: .a).get().addresses.count == 2)
        }
    }
}

/// An answer's header block is kept up to `EasyHandle.maximumHeaderSize` (64 KiB); past that
/// the transfer fails, as one whose body is too large does.
struct CurlEventLoopHeaderBlockTests {
    @Test func aLargeHeaderBlockIsKeptAndAnOversizedOneFailsTheTransfer() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let large = UpstreamHTTPRequest(url: server.baseURL + "/fields?n=60", timeoutMilliseconds: 30_000)
            let response = try await awaitResult { loop.perform(large, completion: $0) }.get()
            #expect(response.status == 200)
            #expect(response.header("x-field-59") == String(repeating: "v", count: 1000))
            let oversized = UpstreamHTTPRequest(url: server.baseURL + "/fields?n=70", timeoutMilliseconds: 30_000)
            let result = await awaitResult { loop.perform(oversized, completion: $0) }
            guard case .failure(let error) = result else {
                Issue.record("a 70 KiB header block was accepted: \(result)")
                return
            }
            #expect(error.code == .transport)
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
                let request = UpstreamHTTPRequest(
                    url: server.baseURL + "/resolve?name=www.example.test&type=1", timeoutMilliseconds: 30_000)
                let response = try await awaitResult { loop.perform(request, completion: $0) }.get()
                #expect(response.status == 200)
            }
            let stats = try await awaitResult {
                loop.perform(UpstreamHTTPRequest(url: server.baseURL + "/connections", timeoutMilliseconds: 30_000), completion: $0)
            }.get()
            #expect(String(decoding: stats.body, as: UTF8.self) == #"{"count": 1}"#)
        }
    }
}

/// A handle is reused from transfer to transfer without `curl_easy_reset`: each request's own
/// options replace the previous one's.
struct CurlEventLoopHandleReuseTests {
    @Test func aGetAfterAPostOnTheSameHandleIsAGetWithItsOwnHeaders() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let url = server.baseURL + "/resolve?name=www.example.test&type=1"
            // The test upstream answers GET only: Python's server refuses any other method with 501.
            let post = UpstreamHTTPRequest(
                url: url, method: .post, headers: [HTTPHeader("Content-Type", "application/dns-message")], body: [1, 2, 3],
                timeoutMilliseconds: 30_000)
            #expect(try await awaitResult { loop.perform(post, completion: $0) }.get().status == 501)
            let get = UpstreamHTTPRequest(url: url, timeoutMilliseconds: 30_000)
            let response = try await awaitResult { loop.perform(get, completion: $0) }.get()
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self).contains("www.example.test"))
            #expect(try await awaitResult { loop.perform(post, completion: $0) }.get().status == 501)
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
            // All eight handed to the loop in one go: tasks of their own could start far apart
            // on a saturated cooperative pool, past the upstream's 30 s wait for all of them.
            let collected = Mutex<[Int]>([])
            let statuses = await withCheckedContinuation { (done: CheckedContinuation<[Int], Never>) in
                for _ in 0..<count {
                    loop.perform(UpstreamHTTPRequest(url: url, timeoutMilliseconds: 60_000)) { result in
                        let all = collected.withLock { statuses -> [Int]? in
                            statuses.append((try? result.get().status) ?? -1)
                            return statuses.count == count ? statuses : nil
                        }
                        if let all { done.resume(returning: all) }
                    }
                }
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
            loop.perform(UpstreamHTTPRequest(url: "http://127.0.0.1:\(port)/", timeoutMilliseconds: 1000)) { _ in
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
    /// The waiters' completions as the loop thread calls them.
    private struct WaiterLog {
        var completions: [Int]
        var completed = 0
        var timeouts = 0
        var firstAt = Double.infinity

        init(count: Int) {
            completions = Array(repeating: 0, count: count)
        }

        /// Records waiter `index`; true when every waiter has completed once.
        mutating func record(_ index: Int, _ result: Result<UpstreamHTTPResponse, UpstreamError>, at now: Double) -> Bool {
            completions[index] += 1
            completed += 1
            firstAt = min(firstAt, now)
            if case .failure(let error) = result, error.code == .timeout { timeouts += 1 }
            return completed == completions.count
        }
    }

    /// Ordering, not speed: the ready transfer must complete before the first waiter times out,
    /// and the waiters' 10 s timeout is ten times what that has ever taken on a loaded machine.
    /// (A loop that did not serve ready sockets would complete it only after the waiters.)
    @Test(.timeLimit(.minutes(10)))
    func aReadyTransferCompletesWhile150OthersWaitAndEachWaiterTimesOutOnce() async throws {
        try await FakeJSONUpstream.with { server in
            let silent = try SilentTCPListener()
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let count = 150
            let waiterTimeout = 10.0
            let waiting = UpstreamHTTPRequest(url: "http://127.0.0.1:\(silent.port)/", timeoutMilliseconds: Int(waiterTimeout * 1000))
            let log = Mutex(WaiterLog(count: count))
            let (allDone, finish) = AsyncStream<Void>.makeStream()
            let started = MonotonicTime.now()
            for index in 0..<count {
                loop.perform(waiting) { result in
                    if log.withLock({ $0.record(index, result, at: MonotonicTime.now()) }) { finish.finish() }
                }
            }
            // Every waiter is in flight (connected, or its SYN dropped by the full backlog and
            // retried) before the ready transfer is sent.
            let inFlight = await TCPSocketTable.wait { $0.filter { $0.remotePort == silent.port && $0.state.isOpen }.count >= count }
            #expect(inFlight, "the \(count) waiters never had their connections open at once")

            // Counted from the moment the ready transfer is sent: a loaded `make test` may keep this
            // task off the cooperative pool past the waiters' timeout, and waiters that ended before
            // it was sent say nothing of the loop.
            let fresh = UpstreamHTTPRequest(url: server.baseURL + "/resolve?name=www.example.test&type=1", timeoutMilliseconds: 60_000)
            let (result, waitersDoneMeanwhile) = await withCheckedContinuation { continuation in
                let doneAtSend = log.withLock { $0.completed }
                loop.perform(fresh) { result in continuation.resume(returning: (result, log.withLock { $0.completed } - doneAtSend)) }
            }
            #expect(try result.get().status == 200)
            #expect(
                waitersDoneMeanwhile == 0, "the ready transfer completed only after \(waitersDoneMeanwhile) waiters had timed out")

            for await _ in allDone {}
            let final = log.withLock { $0 }
            #expect(final.completions == Array(repeating: 1, count: count), "each waiter completes exactly once")
            #expect(final.timeouts == count)
            // Not before its own timeout (curl starts the clock after `perform`, so this is exact).
            #expect(final.firstAt - started >= waiterTimeout - 0.05, "a waiter timed out after \(final.firstAt - started) s")
        }
    }
}

import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSUpstream

/// A GET through `loop`.
private func get(_ loop: CurlEventLoop, _ url: String, timeout: Int = 30_000) async -> Result<UpstreamHTTPResponse, UpstreamError> {
    await awaitResult { loop.perform(UpstreamHTTPRequest(url: url, timeoutMilliseconds: timeout), completion: $0) }
}

/// A 200 answer of ``ScriptedHTTP1Server``, read.
private func answer(_ result: Result<UpstreamHTTPResponse, UpstreamError>) throws -> ScriptedHTTP1Answer {
    let response = try result.get()
    #expect(response.status == 200)
    return try #require(ScriptedHTTP1Answer(response.body), "unexpected body \(response.body)")
}

/// httpdnsd's own HTTP/1.1 client behind ``CurlEventLoop/perform(_:completion:)``, against real
/// loopback servers. ``ScriptedHTTP1Server`` echoes the request's `Accept` header: libcurl sends
/// `*/*`, the client none, so each test also checks which one carried its requests.
@Suite struct HTTP1ClientLiveTests {
    @Test func fiftySequentialRequestsUseOneConnectionWithoutCurl() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let first = try answer(await get(loop, server.baseURL + "/first?n=0"))
            #expect(first.accept == "---", "the request went through libcurl")
            for index in 1..<50 {
                let later = try answer(await get(loop, server.baseURL + "/later?n=\(index)"))
                #expect(later.connections == first.connections, "request \(index) opened a new connection")
                #expect(later.accept == "---")
            }
        }
    }

    @Test func anIPv6LiteralIsServedToo() async throws {
        guard (try? await ScriptedHTTP1Server.with(mode: "keepalive", host: "::1") { _ in true }) == true else {
            // No IPv6 loopback on this machine: nothing to check.
            return
        }
        try await ScriptedHTTP1Server.with(mode: "keepalive", host: "::1") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let first = try answer(await get(loop, server.baseURL + "/a"))
            let second = try answer(await get(loop, server.baseURL + "/chunked"))
            #expect(first.accept == "---" && second.accept == "---")
            #expect(second.connections == first.connections)
        }
    }

    @Test func aServerClosingIdleConnectionsSilentlyStillAnswersEveryRequest() async throws {
        try await ScriptedHTTP1Server.with(mode: "closeidle") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            var last = 0
            for index in 0..<20 {
                let reply = try answer(await get(loop, server.baseURL + "/r?n=\(index)"))
                #expect(reply.accept == "---", "the request went through libcurl")
                // Each request after the first was written to a connection the server then closed,
                // and was sent again on a new one.
                #expect(reply.connections > last)
                last = reply.connections
            }
        }
    }

    @Test func aServerThatStopsMidResponseGivesTimeoutAtTheTimeout() async throws {
        try await ScriptedHTTP1Server.with(mode: "stall") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let started = MonotonicTime.now()
            let (result, completedAt) = await withCheckedContinuation { continuation in
                loop.perform(UpstreamHTTPRequest(url: server.baseURL + "/stall", timeoutMilliseconds: 300)) {
                    continuation.resume(returning: ($0, MonotonicTime.now()))
                }
            }
            guard case .failure(let error) = result else {
                Issue.record("expected a timeout, got \(result)")
                return
            }
            #expect(error.code == .timeout)
            #expect(error.underlying == 28)
            let elapsed = completedAt - started
            #expect(elapsed >= 0.25 && elapsed < 20, "the transfer ended after \(elapsed) s, not at its 300 ms timeout")
        }
    }

    /// A server that answers before it has read the request (its body still being written, the
    /// socket full) has its answer read at once: the transfer ends with it, neither spinning on
    /// the readable socket nor waiting for its timeout.
    @Test func anAnswerThatComesBeforeTheRequestIsWrittenEndsTheTransfer() async throws {
        try await ScriptedHTTP1Server.with(mode: "early") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 32 << 20)
            let request = UpstreamHTTPRequest(url: server.baseURL + "/upload", method: .post, body: body, timeoutMilliseconds: 10_000)
            let started = MonotonicTime.now()
            let (result, completedAt) = await performTimed(loop, request)
            let elapsed = completedAt - started
            #expect((try? result.get())?.status == 413, "\(result)")
            #expect(elapsed < 5, "the transfer ended after \(elapsed) s")
        }
    }

    @Test func aConnectionTheServerClosesIsNotReused() async throws {
        try await ScriptedHTTP1Server.with(mode: "close") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            var last = 0
            for index in 0..<5 {
                let reply = try answer(await get(loop, server.baseURL + "/c?n=\(index)"))
                #expect(reply.accept == "---", "the request went through libcurl")
                #expect(reply.connections == last + 1 || index == 0, "request \(index) did not get a connection of its own")
                last = reply.connections
            }
        }
    }

    @Test func aRequestWaitingForAConnectionTimesOutAtItsOwnTimeout() async throws {
        try await ScriptedHTTP1Server.with(mode: "stall") { server in
            // One connection: the second request waits in line behind the first, which never ends
            // before its own (longer) timeout.
            let loop = CurlEventLoop(maxConnectionsPerHost: 1)
            defer { loop.shutdown() }
            let base = server.baseURL
            // The first request takes the one connection, with a timeout no stall reaches, before
            // the second is made: the server holds its connection (the socket table shows it).
            let first = Mutex<Result<UpstreamHTTPResponse, UpstreamError>?>(nil)
            loop.perform(UpstreamHTTPRequest(url: base + "/first", timeoutMilliseconds: 1_800_000)) { result in
                first.withLock { $0 = result }
            }
            let connected = await TCPSocketTable.wait { table in
                table.contains { $0.remotePort == server.port && $0.state == .established }
            }
            try #require(connected, "the first request never connected")
            let started = MonotonicTime.now()
            let ended = Mutex<(Result<UpstreamHTTPResponse, UpstreamError>, Double)?>(nil)
            loop.perform(UpstreamHTTPRequest(url: base + "/second", timeoutMilliseconds: 300)) { result in
                ended.withLock { $0 = (result, MonotonicTime.now()) }
            }
            // Until the second ends, the client's open connections to the server, looked at every
            // 10 ms: a second request that got a connection of its own (and stalled on it) would
            // show as two, where one that waits in line leaves the first's alone.
            var mostConnections = 0
            let finished = await Poll.until(limit: 30, minimumLooks: 1, every: .milliseconds(10)) {
                let open = TCPSocketTable.connections(toPort: server.port).filter { $0.state.isOpen }.count
                mostConnections = max(mostConnections, open)
                return ended.withLock { $0 != nil }
            }
            try #require(finished, "the waiting request never ended")
            let (second, completedAt) = try #require(ended.withLock { $0 })
            let elapsed = completedAt - started
            guard case .failure(let error) = second else {
                Issue.record("expected a timeout, got \(second)")
                return
            }
            #expect(error.code == .timeout)
            #expect(elapsed >= 0.25 && elapsed < 4, "the waiting request ended after \(elapsed) s, not at its 300 ms timeout")
            #expect(mostConnections == 1, "the client had \(mostConnections) connections open to the server while the second waited")
            // The second waited behind the first, which still holds the connection.
            #expect(first.withLock { $0 } == nil, "the first request ended first: \(String(describing: first.withLock { $0 }))")
        }
    }

    @Test func aRefusedIPv6PortIsTransport() async throws {
        let port = try LoopbackDNSServers.freePort()
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        guard case .failure(let error) = await get(loop, "http://[::1]:\(port)/") else {
            Issue.record("a refused port answered")
            return
        }
        #expect(error.code == .transport)
        #expect(error.underlying == 7)
    }

    @Test func thirtyTwoConcurrentRequestsShareAtMostTheConnectionLimit() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let limit = 4
            let loop = CurlEventLoop(maxConnectionsPerHost: limit)
            defer { loop.shutdown() }
            let before = try answer(await get(loop, server.baseURL + "/warm"))
            let base = server.baseURL
            let replies = await withTaskGroup(of: ScriptedHTTP1Answer?.self) { group in
                for index in 0..<32 {
                    group.addTask { try? answer(await get(loop, base + "/slow?n=\(index)")) }
                }
                return await group.reduce(into: [ScriptedHTTP1Answer?]()) { $0.append($1) }
            }
            let answers = replies.compactMap { $0 }
            #expect(answers.count == 32, "\(32 - answers.count) requests failed")
            let after = try answer(await get(loop, server.baseURL + "/after"))
            #expect(after.connections - before.connections <= limit - 1, "opened \(after.connections - before.connections + 1) connections")
            #expect(after.maxBusy <= limit)
            // The limit was used: 32 requests of 50 ms each were not sent one after the other.
            #expect(after.maxBusy >= 2)
            #expect(answers.allSatisfy { $0.accept == "---" })
        }
    }

    @Test func aHostNameURLStillGoesThroughCurlAndKeepsTheSameHeaderBlock() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            for path in ["/plain", "/chunked"] {
                let viaCurl = try await get(loop, "http://localhost:\(server.port)" + path).get()
                let viaClient = try await get(loop, server.baseURL + path).get()
                #expect(ScriptedHTTP1Answer(viaCurl.body)?.accept == "*/*", "localhost did not go through libcurl")
                #expect(ScriptedHTTP1Answer(viaClient.body)?.accept == "---")
                #expect(viaClient.status == viaCurl.status)
                // The same header lines as curl gives EasyHandle (the chunked answer's trailer included).
                #expect(
                    String(decoding: viaClient.headerBlock, as: UTF8.self) == String(decoding: viaCurl.headerBlock, as: UTF8.self),
                    "\(path)")
                #expect(viaClient.header("x-mixed-case") == "spaced value")
            }
        }
    }
}

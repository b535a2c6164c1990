import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSUpstream

/// What one completion saw: the thread it ran on, its result, and whether the request made from
/// inside it was left for the host's next turn.
private struct Completed: Sendable {
    var thread: UInt
    var result: Result<UpstreamHTTPResponse, UpstreamError>
    var nextWasTaken: Bool
}

/// Runs `body` on a thread standing in for an HTTP thread (`GuestHostThread`, carrying `loop`'s
/// local client), then turns that thread's loop as `HTTPLoop` does until `done` or 30 s.
/// Returns the host thread's identity.
private func onCarryingThread(
    _ loop: CurlEventLoop, maximumInFlight: Int = 128, _ body: @escaping @Sendable (any LoopGuest) -> Void,
    until done: @escaping @Sendable () -> Bool
) async -> UInt {
    await GuestHostThread.run(
        report: { Issue.record("loop failure: \($0)") }, makeGuest: { loop.localClient(on: $0, maximumInFlight: maximumInFlight) },
        start: body, until: done)
}

/// ``CurlEventLoop/localClient(on:)``: requests made on a thread that carries the client run on
/// that thread, over its own connections, against a real loopback server.
@Suite struct HTTP1LocalClientTests {
    @Test func requestsMadeOnTheCarryingThreadAreExchangedAndCompletedThere() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let completed = Mutex<[Completed]>([])
            let total = 20
            // Each completion makes the next request, as an engine completion may: it must be
            // taken for the host's next turn, not started inside the client's own callback.
            let base = server.baseURL
            @Sendable func request(_ index: Int) {
                loop.perform(UpstreamHTTPRequest(url: base + "/n?i=\(index)", timeoutMilliseconds: 10_000)) { result in
                    var taken = true
                    if index + 1 < total {
                        request(index + 1)
                        taken = HTTP1LocalClient.current?.hasPending == true
                    }
                    completed.withLock { $0.append(Completed(thread: UInt(pthread_self()), result: result, nextWasTaken: taken)) }
                }
            }
            let host = await onCarryingThread(loop, { _ in request(0) }, until: { completed.withLock { $0.count } == total })
            let all = completed.withLock { $0 }
            try #require(all.count == total)
            #expect(all.allSatisfy { $0.thread == host }, "a completion ran on another thread than the one that asked")
            #expect(all.allSatisfy { $0.nextWasTaken })
            let answers = try all.map { try #require(ScriptedHTTP1Answer(try $0.result.get().body)) }
            #expect(answers.allSatisfy { $0.accept == "---" }, "a request went through libcurl")
            #expect(Set(answers.map(\.connections)).count == 1, "the requests did not share one connection")
        }
    }

    @Test func requestsBeyondTheThreadsMaximumInFlightGoToTheCurlLoop() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let completed = Mutex<[Completed]>([])
            let base = server.baseURL
            let host = await onCarryingThread(
                loop, maximumInFlight: 2,
                { _ in
                    // Five at once, before the thread's loop turns: two are taken, three go on.
                    for index in 0..<5 {
                        loop.perform(UpstreamHTTPRequest(url: base + "/burst?i=\(index)", timeoutMilliseconds: 10_000)) { result in
                            completed.withLock { $0.append(Completed(thread: UInt(pthread_self()), result: result, nextWasTaken: true)) }
                        }
                    }
                }, until: { completed.withLock { $0.count } == 5 })
            let all = completed.withLock { $0 }
            try #require(all.count == 5)
            for done in all { _ = try done.result.get() }
            #expect(all.filter { $0.thread == host }.count == 2)
            #expect(all.filter { $0.thread != host }.count == 3)
        }
    }

    @Test func aRequestTheClientDoesNotServeGoesToTheCurlLoop() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let completed = Mutex<Completed?>(nil)
            // A host name, not an address literal: libcurl's, on the curl loop's thread.
            let url = "http://localhost:\(server.port)/named"
            let host = await onCarryingThread(
                loop,
                { _ in
                    loop.perform(UpstreamHTTPRequest(url: url, timeoutMilliseconds: 10_000)) { result in
                        completed.withLock { $0 = Completed(thread: UInt(pthread_self()), result: result, nextWasTaken: true) }
                    }
                }, until: { completed.withLock { $0 != nil } })
            let done = try #require(completed.withLock { $0 })
            #expect(done.thread != host)
            let answer = try #require(ScriptedHTTP1Answer(try done.result.get().body))
            #expect(answer.accept == "*/*", "libcurl sends Accept: */*")
        }
    }

    @Test func afterTheLoopShutsDownARequestOnTheCarryingThreadFails() async throws {
        try await ScriptedHTTP1Server.with(mode: "keepalive") { server in
            let loop = CurlEventLoop()
            let completed = Mutex<Completed?>(nil)
            let url = server.baseURL + "/late"
            _ = await onCarryingThread(
                loop,
                { _ in
                    loop.shutdown()
                    loop.perform(UpstreamHTTPRequest(url: url, timeoutMilliseconds: 10_000)) { result in
                        completed.withLock { $0 = Completed(thread: UInt(pthread_self()), result: result, nextWasTaken: true) }
                    }
                }, until: { completed.withLock { $0 != nil } })
            let done = try #require(completed.withLock { $0 })
            guard case .failure(let error) = done.result else {
                Issue.record("expected a failure, got \(done.result)")
                return
            }
            #expect(error.code == .transport)
        }
    }
}

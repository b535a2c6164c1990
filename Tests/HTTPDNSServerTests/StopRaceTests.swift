import Foundation
import HTTPDNSServer
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `stop(grace:)` racing with responders that answer at the same moment. Runs in a child
/// process (an exit test): when the race leaves a connection suspended, libmicrohttpd aborts the
/// process in `MHD_stop_daemon` ("called while we have suspended connections").
@Suite(.serialized) struct StopRaceTests {
    @Test func everySuspendedRequestIsAnsweredWhenRespondersRaceWithStop() async {
        let report = Self.reportPath(parent: getpid())
        defer { unlink(report) }
        let result = await #expect(processExitsWith: .success) {
            StopRaceTests.raceRespondersWithStop(rounds: 10, connections: 300)
        }
        // A failed exit test gives no result to read the child's stderr from: the child also
        // writes which step failed to a file named after this process.
        if result == nil, let text = try? String(contentsOfFile: report, encoding: .utf8) {
            Issue.record("the child said: \(text)")
        }
    }

    /// Requests held on both HTTP threads, never answered, then `stop`: each gets its 503. Each
    /// thread keeps its own table of suspended connections, and a stop that emptied only one
    /// would leave the other's suspended, which libmicrohttpd aborts on.
    @Test func stopAnswersTheHeldRequestsOfEveryHTTPThread() async {
        let report = Self.reportPath(parent: getpid())
        defer { unlink(report) }
        let result = await #expect(processExitsWith: .success) {
            StopRaceTests.stopWithRequestsHeldOnEveryThread()
        }
        if result == nil, let text = try? String(contentsOfFile: report, encoding: .utf8) {
            Issue.record("the child said: \(text)")
        }
    }

    /// Where the child of process `parent` writes why it failed.
    static func reportPath(parent: pid_t) -> String { "/tmp/httpdnsd-stop-race-\(parent).txt" }

    /// Says on stderr and in the report file why the child stops, then exits with `code`.
    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        try? (message + "\n").write(toFile: reportPath(parent: getppid()), atomically: true, encoding: .utf8)
        exit(code)
    }

    /// A server of two HTTP threads running `handle`, and its port; exits with status 2 when it
    /// does not start. The tests are about stop, not about slow clients: no read deadline may cut
    /// a connection whose request a loaded machine has not sent yet.
    static func startServer(_ handle: @escaping @Sendable (HTTPRequest) -> HandlerResult) -> (HTTPServer, UInt16) {
        var options = HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2, maxBodyBytes: 1024)
        options.requestReadTimeout = 0
        let server = HTTPServer(options: options, handler: handle)
        do {
            return (server, try server.start())
        } catch {
            fail("set-up: could not start the server: \(error)", code: 2)
        }
    }

    /// Each round: `connections` requests suspended, then one thread answers them all while
    /// another stops the server. Every client must get an answer (200 or 503); exits with
    /// status 3 when one did not.
    static func raceRespondersWithStop(rounds: Int, connections count: Int) {
        for _ in 0..<rounds {
            let handler = ScriptedHandler()
            let (server, port) = startServer { handler.handle($0) }
            // Set-up failures exit 2 and say why; under a loaded machine (the whole suite runs in
            // parallel) accepting 300 connections can take seconds, hence the generous deadlines.
            var connections: [RawHTTPConnection] = []
            for index in 0..<count {
                do {
                    connections.append(try RawHTTPConnection(port: port, timeout: 30))
                } catch {
                    fail("set-up: client \(index + 1) of \(count) could not connect: \(error)", code: 2)
                }
            }
            // Sent a group at a time, each group held before the next is sent. libmicrohttpd's
            // epoll loop, handed a full batch of events (128, its MAX_EVENTS), asks epoll for more
            // with its full timeout before it handles the batch: 128 requests that arrive while
            // a worker is descheduled (a loaded machine) then wait for that worker's next event,
            // and here none comes. A group of 50 never fills a batch.
            for (index, connection) in connections.enumerated() {
                connection.send("GET", "/hold")
                let sent = index + 1
                guard sent % 50 == 0 || sent == count else { continue }
                let deadline = Date().addingTimeInterval(30)
                while handler.heldResponders.count < sent && Date() < deadline { usleep(2_000) }
                guard handler.heldResponders.count == sent else {
                    fail("set-up: only \(handler.heldResponders.count) of \(sent) requests sent arrived within 30 s", code: 2)
                }
            }

            // Answers start before the stop and go on while it runs, so some land while `stop`
            // holds the table of suspended connections.
            let answered = Atomic<Int>(0)
            let responders = handler.heldResponders
            let answering = Thread {
                for respond in responders {
                    respond(ServerResponse(status: 200, body: Array("late".utf8)))
                    answered.add(1, ordering: .releasing)
                }
            }
            answering.start()
            while answered.load(ordering: .acquiring) < count / 4 {}
            server.stop(grace: 0)
            for connection in connections {
                let outcome = Result { try connection.readResponse() }
                guard case .success(let response) = outcome, response.status == 200 || response.status == 503 else {
                    fail("a suspended request got no answer: \(outcome)", code: 3)
                }
            }
        }
    }

    /// Opens connections, each holding one request, until both HTTP threads hold some (which
    /// thread's daemon accepts a connection is a race between them), then stops the server with
    /// no grace. Exits with status 3 when a client's answer is not a 503.
    static func stopWithRequestsHeldOnEveryThread() {
        let handler = ScriptedHandler()
        let threads = Mutex<Set<UInt>>([])
        let (server, port) = startServer { request in
            threads.withLock { _ = $0.insert(UInt(pthread_self())) }
            return handler.handle(request)
        }
        var connections: [RawHTTPConnection] = []
        while threads.withLock({ $0.count }) < 2 {
            guard connections.count < 200 else { fail("set-up: 200 connections in a row went to one HTTP thread", code: 2) }
            do {
                let connection = try RawHTTPConnection(port: port, timeout: 30)
                connection.send("GET", "/hold")
                connections.append(connection)
            } catch {
                fail("set-up: client \(connections.count + 1) could not connect: \(error)", code: 2)
            }
            let deadline = Date().addingTimeInterval(30)
            while handler.heldResponders.count < connections.count && Date() < deadline { usleep(1_000) }
            guard handler.heldResponders.count == connections.count else {
                fail("set-up: only \(handler.heldResponders.count) of \(connections.count) requests arrived within 30 s", code: 2)
            }
        }
        server.stop(grace: 0)
        for connection in connections {
            let outcome = Result { try connection.readResponse() }
            guard case .success(let response) = outcome, response.status == 503 else {
                fail("a held request was not answered 503 by stop: \(outcome)", code: 3)
            }
        }
    }
}

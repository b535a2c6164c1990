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
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            StopRaceTests.raceRespondersWithStop(rounds: 10, connections: 300)
        }
        // The child says on stderr which step failed; show it with the failure.
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("child's stderr: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    /// Each round: `connections` requests suspended, then one thread answers them all while
    /// another stops the server. Every client must get an answer (200 or 503); exits with
    /// status 3 when one did not.
    static func raceRespondersWithStop(rounds: Int, connections count: Int) {
        for _ in 0..<rounds {
            let handler = ScriptedHandler()
            let server = HTTPServer(options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2, maxBodyBytes: 1024)) { handler.handle($0) }
            // Set-up failures exit 2 and say why; under a loaded machine (the whole suite runs in
            // parallel) accepting 300 connections can take seconds, hence the generous deadlines.
            guard let port = try? server.start(),
                  let connections = try? (0..<count).map({ _ in try RawHTTPConnection(port: port, timeout: 30) }) else {
                FileHandle.standardError.write(Data("set-up: could not start the server or connect \(count) clients\n".utf8))
                exit(2)
            }
            for connection in connections { connection.send("GET", "/hold") }
            let deadline = Date().addingTimeInterval(30)
            while handler.heldResponders.count < count && Date() < deadline { usleep(2_000) }
            guard handler.heldResponders.count == count else {
                FileHandle.standardError.write(Data("set-up: only \(handler.heldResponders.count) of \(count) requests arrived\n".utf8))
                exit(2)
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
                    FileHandle.standardError.write(Data("a suspended request got no answer: \(outcome)\n".utf8))
                    exit(3)
                }
            }
        }
    }
}

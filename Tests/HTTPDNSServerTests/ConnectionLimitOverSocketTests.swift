import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The global connection limit at libmicrohttpd's accept, over real loopback connections, at
/// exactly the limit and one over it (`ConnectionLimitTests` checks the tracker's rule alone).
@Suite(.serialized) struct ConnectionLimitOverSocketTests {
    /// With `connectionLimit` 3 the third connection is served and the fourth is closed at once,
    /// counted as refused at the limit; once one of the three has gone, a new one is served.
    @Test func theLastConnectionWithinTheLimitIsServedAndTheNextIsClosed() throws {
        var options = HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2, connectionLimit: 3, maxBodyBytes: 1024)
        // Only the limit may close a connection here.
        options.requestReadTimeout = 0
        let handler = ScriptedHandler()
        let server = HTTPServer(options: options) { handler.handle($0) }
        let port = try server.start()
        defer { server.stop(grace: 0) }

        // One at a time, each answered before the next connects: the server holds exactly
        // as many as are open here.
        var open: [RawHTTPConnection] = []
        for index in 1...3 {
            let connection = try RawHTTPConnection(port: port)
            let response = Result { try connection.request("GET", "/text") }
            #expect((try? response.get())?.status == 200, "connection \(index) of the limit of 3: \(response)")
            open.append(connection)
        }
        #expect(server.connectionStats.open == 3)

        let over = try RawHTTPConnection(port: port)
        let refused = Result { try over.request("GET", "/text") }
        #expect((try? refused.get()) == nil, "a fourth connection was served: \(refused)")
        #expect(server.connectionStats.rejectedAtLimit == 1)
        #expect(server.connectionStats.open == 3)

        // One leaves; its place is free once the server has seen it close (a hang guard only).
        open.removeFirst()
        let deadline = Date().addingTimeInterval(30)
        while server.connectionStats.open > 2 && Date() < deadline { usleep(10_000) }
        #expect(server.connectionStats.open == 2)
        let next = try RawHTTPConnection(port: port)
        #expect(try next.request("GET", "/text").status == 200)
        #expect(server.connectionStats.rejectedAtLimit == 1)
    }
}

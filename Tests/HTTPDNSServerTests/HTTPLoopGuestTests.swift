import Foundation
import HTTPDNSLoop
import Synchronization
import Testing

@testable import HTTPDNSServer

/// A guest that stands in for the upstream client on each HTTP thread: a deferred request's
/// responder is taken (`take`), "sent upstream" at the loop's next turn (a byte written to the
/// guest's own pipe, watched in the thread's epoll set) and answered when that pipe is ready
/// (`handle`).
private final class PipeGuest: LoopGuest, @unchecked Sendable {
    /// Every guest made, by the thread that made it.
    static let made = Mutex<[UInt: PipeGuest]>([:])

    let thread = UInt(pthread_self())
    private let sockets: EpollSet
    private let pipeFDs: (read: Int32, write: Int32)
    private var taken: [@Sendable (ServerResponse) -> Void] = []
    private var sent: [@Sendable (ServerResponse) -> Void] = []
    /// Written by this guest's thread only; read by the test once the answers are in.
    let answeredOnOwnThread = Atomic<Int>(0)
    let answeredElsewhere = Atomic<Int>(0)

    init(sockets: EpollSet) {
        self.sockets = sockets
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { precondition(fcntl(fd, F_SETFL, O_NONBLOCK) == 0) }
        pipeFDs = (fds[0], fds[1])
        sockets.watch(pipeFDs.read, readable: true, writable: false)
        Self.made.withLock { $0[thread] = self }
    }

    /// Called by the handler, on the HTTP thread that read the request.
    func take(_ respond: @escaping @Sendable (ServerResponse) -> Void) {
        precondition(UInt(pthread_self()) == thread, "a handler ran on a thread other than its guest's")
        taken.append(respond)
    }

    var isIdle: Bool { taken.isEmpty && sent.isEmpty }
    var hasPending: Bool { !taken.isEmpty }

    /// "Sends" what the handlers took since the last turn.
    func turn(now: Int64) -> Int64? {
        for respond in taken {
            sent.append(respond)
            var byte: UInt8 = 1
            precondition(write(pipeFDs.write, &byte, 1) == 1)
        }
        taken.removeAll()
        return nil
    }

    func handle(_ ready: EpollSet.Readiness) -> Bool {
        guard ready.fd == pipeFDs.read else { return false }
        var byte: UInt8 = 0
        while read(pipeFDs.read, &byte, 1) == 1, !sent.isEmpty {
            let respond = sent.removeFirst()
            if UInt(pthread_self()) == thread {
                answeredOnOwnThread.add(1, ordering: .relaxed)
            } else {
                answeredElsewhere.add(1, ordering: .relaxed)
            }
            respond(ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array("from the guest".utf8)))
        }
        return true
    }

    func shutdown() {
        sockets.watch(pipeFDs.read, readable: false, writable: false)
        close(pipeFDs.read)
        close(pipeFDs.write)
    }
}

/// The HTTP threads carry a guest (`HTTPServerOptions.loopGuest`): made on each thread, given
/// the work that the thread's handlers start, woken by its own sockets in the thread's epoll set,
/// and able to answer a deferred request from that thread without any other thread.
@Suite(.serialized) struct HTTPLoopGuestTests {
    @Test func aDeferredRequestIsSentAndAnsweredByItsOwnThreadsGuest() throws {
        PipeGuest.made.withLock { $0.removeAll() }
        var options = HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 10)
        options.loopGuest = { PipeGuest(sockets: $0) }
        let server = HTTPServer(options: options) { _ in
            .deferred { respond in
                let guest = PipeGuest.made.withLock { $0[UInt(pthread_self())] }
                guard let guest else {
                    respond(ServerResponse(status: 500, body: Array("no guest on this thread".utf8)))
                    return
                }
                guest.take(respond)
            }
        }
        let port = try server.start()
        defer { server.stop(grace: 0) }
        // Each thread makes its guest first thing, before it runs its daemon.
        let deadline = Date().addingTimeInterval(30)
        while PipeGuest.made.withLock({ $0.count }) < 2 && Date() < deadline { usleep(1_000) }
        #expect(PipeGuest.made.withLock { $0.count } == 2, "one guest per HTTP thread")

        var connections: [RawHTTPConnection] = []
        for _ in 0..<8 { connections.append(try RawHTTPConnection(port: port)) }
        for round in 0..<3 {
            for connection in connections {
                let response = try connection.request("GET", "/r?round=\(round)")
                #expect(response.status == 200)
                #expect(response.text == "from the guest")
            }
        }
        let guests = PipeGuest.made.withLock { Array($0.values) }
        #expect(guests.map { $0.answeredOnOwnThread.load(ordering: .relaxed) }.reduce(0, +) == 24)
        #expect(guests.map { $0.answeredElsewhere.load(ordering: .relaxed) }.reduce(0, +) == 0)
    }
}

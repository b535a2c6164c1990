import Foundation
import HTTPDNSTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM during traffic: `/readyz` turns 503 while the listener still accepts and answers for
/// `shutdownDrain`, then the process finishes, flushes and exits 0; and systemd's readiness
/// protocol (`NOTIFY_SOCKET`).
@Suite("Shutdown drain")
struct ShutdownDrainTests {
    /// What a client loop saw: answers by status, and connections that failed.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var statuses: [Int] = []
        private var failures: [String] = []
        private var readyAfterSignal: [Int] = []

        func answered(_ status: Int) { lock.withLock { statuses.append(status) } }
        func failed(_ error: String) { lock.withLock { failures.append(error) } }
        func ready(_ status: Int) { lock.withLock { readyAfterSignal.append(status) } }
        var snapshot: (statuses: [Int], failures: [String], ready: [Int]) { lock.withLock { (statuses, failures, readyAfterSignal) } }
    }

    @Test func sigtermKeepsAcceptingAndAnsweringThroughTheDrainWhileReadyzIs503() async throws {
        // A 60 s drain: the hammer must see /readyz turn 503 and then get 3 answers (a new
        // connection each) before the listener closes. The long drain leaves room for a loaded
        // machine that holds this test's tasks back; the stop's second SIGTERM ends it early.
        try await withService(configure: { _, options in options.shutdownDrain = 60 }) { _, service in
            let path = "/v1/default/resolve?host=\(TestZone.www)&type=A"
            #expect(try await service.client.get(path).status == 200)
            let listening = TCPSocketTable.listeningSockets(onPort: service.port)
            #expect(!listening.isEmpty, "httpdnsd listens on \(service.address)")
            let tally = Tally()
            let client = HTTPClient(port: service.port, timeout: 10)
            // The hammer: one new connection per request, from before the signal until 3
            // requests sent after /readyz was seen answering 503 were answered: each of those
            // connected while the drain ran.
            let hammer = Task {
                var afterNotReady = 0
                while afterNotReady < 3 {
                    let draining = tally.snapshot.ready.contains(503)
                    do {
                        let response = try await client.get(path)
                        tally.answered(response.status)
                        if draining { afterNotReady += 1 }
                    } catch {
                        tally.failed("\(error)")
                        return
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            service.send(signal: SIGTERM)
            // /readyz turns 503 (a hang guard bounds the wait; nothing is asserted on time).
            let deadline = Date().addingTimeInterval(30)
            while tally.snapshot.ready.last != 503 && Date() < deadline {
                if let response = try? await client.get("/readyz") { tally.ready(response.status) }
            }
            await hammer.value
            let seen = tally.snapshot
            #expect(seen.ready.contains(503), "readyz after SIGTERM: \(seen.ready)")
            #expect(seen.failures.isEmpty, "refused or failed during the drain: \(seen.failures)")
            #expect(!seen.statuses.isEmpty && seen.statuses.allSatisfy { $0 == 200 }, "\(seen.statuses)")
            // The limit covers the whole drain and the 10 s grace after it, should the second
            // SIGTERM not end the drain: a hang guard, not a timing assertion.
            #expect(await service.stop(timeout: 90) == 0, "\(service.log().suffix(2000))")
            #expect(service.log().contains("still serving for 60.0 s (shutdownDrain)"))
            #expect(service.log().contains("stopped cleanly"))
            #expect(!TCPSocketTable.anyListens(listening))
        }
    }

    @Test func readinessAndStoppingAreSentToNotifySocket() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("notify")
        let socketPath = directory.appendingPathComponent("notify.sock").path
        let receiver = try DatagramReceiver(path: socketPath)
        try await withService(configure: { _, options in options.environment["NOTIFY_SOCKET"] = socketPath }) { _, service in
            #expect(receiver.next(timeout: 20) == "READY=1")
            #expect(await service.stop() == 0)
            #expect(receiver.next(timeout: 20) == "STOPPING=1")
        }
    }
}

/// A unix datagram socket bound at `path`, as systemd's `NOTIFY_SOCKET` is.
final class DatagramReceiver: @unchecked Sendable {
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw HarnessError("bind \(path): \(errno)") }
    }

    deinit { close(fd) }

    /// The next datagram as text, or nil after `timeout` seconds.
    func next(timeout: Int) -> String? {
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}

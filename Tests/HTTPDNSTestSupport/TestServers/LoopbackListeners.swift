import Foundation
import HTTPDNSCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on a loopback address, as a target for connection speed tests.
///
/// - `.accepting` completes every handshake and accepts (and closes) the connections on a thread
///   of its own: a probe to it is reachable.
/// - `.blackHole` listens with backlog 0 and fills its accept queue with one connection of its
///   own at start, never accepting; Linux then drops every further SYN, so a connect to it hangs
///   until the caller's timeout.
///
/// Any address of 127.0.0.0/8 works on Linux without configuration; ``group(_:count:)`` puts
/// several listeners on distinct addresses that share one port (a speed test probes one port).
/// A port with no listener at all (refused at once) comes from `deadPort()`. Call ``stop()`` in a
/// `defer`; it is idempotent, safe from any thread, and also runs on deinit.
public final class LoopbackListener: Sendable {
    /// What the listener does with connections.
    public enum Behaviour: Sendable {
        case accepting
        case blackHole
    }

    /// The literal address it listens on, e.g. `127.1.2.3` or `::1`.
    public let host: String
    /// The port it listens on.
    public let port: UInt16
    public let behaviour: Behaviour

    private let listener: Int32
    /// The black hole's own connections that fill its accept queue.
    private let fillers: [Int32]
    private let closed = Mutex(false)
    private let loop = AcceptLoop()

    /// Listens on `host`:`port` (port 0: the kernel picks one).
    /// - Throws: `HarnessError` when the address does not parse, the bind fails (for example
    ///   `EADDRINUSE`), or a black hole's accept queue could not be filled.
    public init(_ behaviour: Behaviour, host: String = "127.0.0.1", port: UInt16 = 0) throws {
        guard let address = SocketAddress(host, port: port) else { throw HarnessError("'\(host)' is not an IP literal") }
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard address.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("bind \(host):\(port): errno \(code)")
        }
        guard listen(fd, behaviour == .accepting ? 128 : 0) == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("listen \(host):\(port): errno \(code)")
        }
        guard let boundPort = Self.localPort(fd) else {
            close(fd)
            throw HarnessError("getsockname failed for \(host)")
        }
        self.host = host
        self.port = boundPort
        self.behaviour = behaviour
        self.listener = fd
        switch behaviour {
        case .accepting:
            fillers = []
            loop.start(listener: fd)
        case .blackHole:
            do {
                fillers = try Self.fillAcceptQueue(host: host, port: boundPort)
            } catch {
                close(fd)
                throw error
            }
            loop.done.signal()
        }
    }

    deinit {
        stop()
    }

    /// How many connections an accepting listener has accepted so far (0 for a black hole).
    public var acceptedConnections: Int {
        loop.accepted.load(ordering: .acquiring)
    }

    /// Stops accepting and closes every socket of the listener.
    public func stop() {
        let first = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        loop.stopRequested.store(true, ordering: .releasing)
        loop.done.wait()
        for filler in fillers { close(filler) }
        close(listener)
    }

    /// `count` listeners of one behaviour on distinct random 127.x.y.z addresses sharing one port.
    public static func group(_ behaviour: Behaviour, count: Int) throws -> [LoopbackListener] {
        var lastError: Error = HarnessError("no attempt")
        for _ in 0..<20 {
            var listeners: [LoopbackListener] = []
            do {
                var hosts = Set<String>()
                while hosts.count < count { hosts.insert(randomLoopbackAddress()) }
                for host in hosts {
                    listeners.append(try LoopbackListener(behaviour, host: host, port: listeners.first?.port ?? 0))
                }
                return listeners
            } catch {
                listeners.forEach { $0.stop() }
                lastError = error
            }
        }
        throw lastError
    }

    /// A random address in 127.100.0.0 – 127.199.255.254, away from the 127.0.0.x addresses that
    /// other tests and the test zone use.
    public static func randomLoopbackAddress() -> String {
        "127.\(Int.random(in: 100...199)).\(Int.random(in: 0...255)).\(Int.random(in: 1...254))"
    }

    /// Connects to the listener until a connect is refused by the kernel's accept-queue check:
    /// its SYN dropped, which the connecting socket shows by retransmitting it (a connect merely
    /// slow on a loaded machine does not count as full). Returns the connected sockets, which
    /// keep the queue full.
    private static func fillAcceptQueue(host: String, port: UInt16) throws -> [Int32] {
        guard let address = SocketAddress(host, port: port) else { throw HarnessError("'\(host)' is not an IP literal") }
        var connected: [Int32] = []
        for _ in 0..<16 {
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { break }
            let status = address.withSockaddr { connect(fd, $0, $1) }
            var completed = status == 0
            if !completed, errno == EINPROGRESS {
                // At most 30 s (a hang guard): a dropped SYN is retransmitted after about 1 s.
                for _ in 0..<600 {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&descriptor, 1, 50) > 0 {
                        var error: Int32 = 0
                        var length = socklen_t(MemoryLayout<Int32>.size)
                        completed = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
                        break
                    }
                    if synRetransmitted(fd) { break }
                }
            }
            guard completed else {
                close(fd)
                if connected.isEmpty { break }
                return connected
            }
            connected.append(fd)
        }
        connected.forEach { close($0) }
        throw HarnessError("could not fill the accept queue of \(host):\(port)")
    }

    /// True when the connecting socket `fd` has sent its SYN again (the first one was dropped).
    private static func synRetransmitted(_ fd: Int32) -> Bool {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
        return info.tcpi_total_retrans > 0 || info.tcpi_retransmits > 0
    }

    private static func localPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}

/// The accepting listener's thread and what it shares with the listener.
private final class AcceptLoop: Sendable {
    let stopRequested = Atomic<Bool>(false)
    let accepted = Atomic<Int>(0)
    /// Signalled once the thread has ended (or at once when there is none).
    let done = DispatchSemaphore(value: 0)

    /// Accepts and closes connections on `listener` until `stopRequested`; checks it every 50 ms.
    func start(listener: Int32) {
        let thread = Thread { [self] in
            while !stopRequested.load(ordering: .acquiring) {
                var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 50) > 0 else { continue }
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    accepted.add(1, ordering: .releasing)
                    close(client)
                }
            }
            done.signal()
        }
        thread.name = "loopback-listener"
        thread.start()
    }
}

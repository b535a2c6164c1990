import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The loop thread of a `PlainDNSServer`: waits on its UDP socket, its TCP listening socket,
/// its TCP connections and its queue's wake-up pipe; reads queries and hands them to the
/// service, sends the responses the queue brings back, and closes idle TCP connections.
/// Confined to that thread.
final class PlainDNSLoop {
    struct Sockets: Sendable {
        var udp: Int32
        var tcp: Int32
    }

    /// One TCP connection (RFC 7766): several queries, answered in the order they complete.
    struct Connection {
        let id: UInt64
        let fd: Int32
        let peer: PeerAddress
        var reader = PlainDNSMessages.StreamReader()
        /// Framed responses not yet written.
        var output: [UInt8] = []
        /// Queries whose response has not come back yet.
        var inFlight = 0
        /// The peer closed its side: no more queries, the connection ends once nothing is due.
        var readClosed = false
        var lastActive: Double
        var watchedReadable = false
        var watchedWritable = false
    }

    /// Queries one connection may have in flight before it is read no further until some are
    /// answered; and framed output it may hold unread, beyond which it is not read either.
    static let maxInFlight = 64
    static let maxOutput = 256 * 1024

    let server: PlainDNSServer
    let sockets: Sockets
    let epoll: EpollSet
    var connections: [UInt64: Connection] = [:]
    var connectionByFD: [Int32: UInt64] = [:]
    var nextConnectionID: UInt64 = 1
    var buffer = [UInt8](repeating: 0, count: 65_536)
    /// When idle connections were last looked for (once a second is often enough).
    var lastIdleCheck = MonotonicTime.now()

    init(server: PlainDNSServer, sockets: Sockets) {
        self.server = server
        self.sockets = sockets
        epoll = EpollSet(wake: server.queue.wake, name: "plain DNS")
    }

    func run() {
        epoll.watch(sockets.udp, readable: true, writable: false)
        epoll.watch(sockets.tcp, readable: true, writable: false)
        while true {
            let woken = epoll.wait(milliseconds: 1000) { ready in handle(ready) }
            if woken { server.queue.wake.drain() }
            let (items, stop) = server.queue.take()
            for item in items { deliver(item) }
            if stop { break }
            let now = MonotonicTime.now()
            if now - lastIdleCheck >= 1 {
                lastIdleCheck = now
                closeIdle(now: now)
            }
        }
        for id in Array(connections.keys) { closeConnection(id) }
        _ = server.queue.close()
        close(sockets.udp)
        close(sockets.tcp)
        epoll.close()
    }

    private func handle(_ ready: EpollSet.Readiness) {
        if ready.fd == sockets.udp {
            readDatagrams()
        } else if ready.fd == sockets.tcp {
            accept()
        } else if let id = connectionByFD[ready.fd] {
            if ready.writable { flush(id) }
            if ready.readable || ready.failed { read(id) }
        }
    }

    /// Reads datagrams until none is waiting (at most 256 a turn, so that TCP gets its share).
    private func readDatagrams() {
        let server = self.server
        for _ in 0..<256 {
            var from = PlainDNSSocketAddress()
            from.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &from.storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(sockets.udp, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), $0, &from.length)
                    }
                }
            }
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            guard count <= buffer.count, let peer = from.peer else {
                server.metrics.malformed[PlainDNSMetrics.index(.udp)].increment()
                continue
            }
            let (_, immediate) = ask(Array(buffer[0..<count]), peer: peer, transport: .udp, destination: .udp(from))
            if let immediate { sendDatagram(immediate, to: from) }
        }
    }

    /// Hands one query to the service. A reply given before the call returns (a cache hit)
    /// is returned for the loop to send itself; a later one (a miss) comes back through the
    /// queue. `promised`: whether a reply comes at all (`answerPlainDNS`).
    func ask(
        _ message: [UInt8], peer: PeerAddress, transport: PlainDNSMessages.Transport, destination: PlainDNSServer.Outgoing.Destination
    ) -> (promised: Bool, immediate: [UInt8]?) {
        let server = self.server, handoff = ReplyHandoff()
        let promised = server.service.answerPlainDNS(
            message, account: server.options.account, peer: peer, transport: transport, metrics: server.metrics
        ) { reply in
            if !handoff.keep(reply) { server.send(PlainDNSServer.Outgoing(destination: destination, message: reply)) }
        }
        return (promised, handoff.close())
    }

    private func sendDatagram(_ message: [UInt8], to address: PlainDNSSocketAddress) {
        guard !message.isEmpty else { return }
        var to = address
        _ = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &to.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(sockets.udp, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, to.length)
                }
            }
        }
    }

    /// Sends one response the queue brought: a datagram, or onto its TCP connection.
    private func deliver(_ item: PlainDNSServer.Outgoing) {
        switch item.destination {
        case .udp(let to):
            sendDatagram(item.message, to: to)
        case .tcp(let id):
            guard connections[id] != nil else { return }
            connections[id]!.inFlight -= 1
            if let framed = PlainDNSMessages.framed(item.message), !item.message.isEmpty {
                connections[id]!.output += framed
            }
            flush(id)
        }
    }
}

/// A reply given while `answerPlainDNS` has not returned yet (a cache hit) is kept here for the
/// loop to send at once; one given after (a miss) is refused, and goes through the queue.
final class ReplyHandoff: Sendable {
    private enum State {
        case open
        case kept([UInt8])
        case closed
    }

    private let state = Mutex(State.open)

    /// Keeps `reply` while the call is open; false once it has returned.
    func keep(_ reply: [UInt8]) -> Bool {
        state.withLock { state in
            guard case .open = state else { return false }
            state = .kept(reply)
            return true
        }
    }

    /// Ends the call: the reply kept during it, if any.
    func close() -> [UInt8]? {
        state.withLock { state in
            defer { state = .closed }
            if case .kept(let reply) = state { return reply }
            return nil
        }
    }
}

import HTTPDNSCore
import HTTPDNSLoop

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
            let destination = from
            _ = server.service.answerPlainDNS(
                Array(buffer[0..<count]), account: server.options.account, peer: peer, transport: .udp, metrics: server.metrics
            ) { message in
                guard !message.isEmpty else { return }
                server.send(PlainDNSServer.Outgoing(destination: .udp(destination), message: message))
            }
        }
    }

    /// Sends one response the queue brought: a datagram, or onto its TCP connection.
    private func deliver(_ item: PlainDNSServer.Outgoing) {
        switch item.destination {
        case .udp(let to):
            var to = to
            _ = item.message.withUnsafeBytes { bytes in
                withUnsafePointer(to: &to.storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(sockets.udp, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, to.length)
                    }
                }
            }
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

import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The loop thread of a `DoTServer`: waits on its listening socket, its connections and its
/// queue's wake-up pipe; accepts under the connection limits (`ConnectionTable`, as the HTTP
/// listeners do), drives each connection's TLS handshake and records, hands every whole query
/// to the service and writes each response as it completes (so a hit is not held back behind an
/// earlier miss), and cuts idle and slow connections (`DoTTimeouts`). Confined to that thread.
final class DoTLoop {
    /// One connection: its TLS session, the queries read and the responses not yet written.
    final class Connection {
        let id: UInt64
        let fd: Int32
        let peer: PeerAddress
        let tls: TLSSession
        /// Its entry in the connection table (client, phase and since when, for shedding).
        let tracked: TrackedConnection
        var established = false
        var account = DoTAccountName.fallback
        var reader = PlainDNSMessages.StreamReader()
        /// Framed responses not yet written; `sending` bytes of its front are a record GnuTLS
        /// holds already (a write that returned `.again`), to be passed again as they are.
        var output: [UInt8] = []
        var sending = 0
        var inFlight = 0
        var gotQuery = false
        /// The peer ended the session: no more queries; closed once nothing is due.
        var readClosed = false
        /// The last TLS call that returned `.again` waits for writability.
        var waitsForWrite = false
        var phase = ReadDeadline.Phase.opening
        var since: Int
        /// Since when output has waited without a byte taken (nil: none waits).
        var stalledSince: Int?
        var watchedReadable = false
        var watchedWritable = false

        init(id: UInt64, fd: Int32, peer: PeerAddress, tls: TLSSession, tracked: TrackedConnection, now: Int) {
            self.id = id
            self.fd = fd
            self.peer = peer
            self.tls = tls
            self.tracked = tracked
            since = now
        }
    }

    /// Queries one connection may have in flight before it is read no further until some are
    /// answered; and output it may hold unwritten, beyond which it is not read either.
    static let maxInFlight = 64
    static let maxOutput = 256 * 1024
    /// The most plaintext handed to one record write (TLS's record size).
    static let recordSize = 16_384

    let server: DoTServer
    let listening: Int32
    let epoll: EpollSet
    let timeouts: DoTTimeouts
    var table = ConnectionTable()
    var connections: [UInt64: Connection] = [:]
    var connectionByFD: [Int32: UInt64] = [:]
    var nextConnectionID: UInt64 = 1
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var lastTimeoutCheck = ConnectionTracker.now()

    init(server: DoTServer, listening: Int32) {
        self.server = server
        self.listening = listening
        timeouts = server.options.timeouts
        epoll = EpollSet(wake: server.queue.wake, name: "DoT")
    }

    func run() {
        epoll.watch(listening, readable: true, writable: false)
        while true {
            let woken = epoll.wait(milliseconds: 250) { ready in handle(ready) }
            if woken { server.queue.wake.drain() }
            let (items, stop) = server.queue.take()
            for item in items { deliver(item) }
            if stop { break }
            let now = ConnectionTracker.now()
            if now - lastTimeoutCheck >= 250 {
                lastTimeoutCheck = now
                cutOverdue(now: now)
            }
        }
        for id in Array(connections.keys) { closeConnection(id) }
        _ = server.queue.close()
        close(listening)
        epoll.close()
    }

    private func handle(_ ready: EpollSet.Readiness) {
        if ready.fd == listening {
            accept()
        } else if let id = connectionByFD[ready.fd], let connection = connections[id] {
            if !connection.established {
                handshake(connection)
            } else {
                if ready.writable { flush(connection) }
                if connections[id] != nil && (ready.readable || ready.failed) { read(connection) }
            }
        }
    }

    /// Drives the handshake as far as the socket allows; once done, takes the account from the
    /// server name and reads the queries that may have come with the handshake's last flight.
    func handshake(_ connection: Connection) {
        for _ in 0..<8 {
            switch connection.tls.handshake() {
            case .done:
                connection.established = true
                connection.waitsForWrite = false
                connection.account = DoTAccountName.account(serverName: connection.tls.serverName, domain: server.options.accountDomain)
                server.metrics.handshakes.increment()
                read(connection)
                return
            case .again:
                connection.waitsForWrite = connection.tls.wantsWrite
                updateWatch(connection)
                return
            case .retry:
                continue
            case .closed, .failed:
                server.metrics.handshakeFailures.increment()
                closeConnection(connection.id)
                return
            }
        }
        updateWatch(connection)
    }

    /// Sends one response the queue brought onto its connection.
    private func deliver(_ item: DoTServer.Outgoing) {
        guard let connection = connections[item.connection] else { return }
        connection.inFlight -= 1
        append(item.message, to: connection)
        flush(connection)
    }

    func append(_ message: [UInt8], to connection: Connection) {
        guard !message.isEmpty, let framed = PlainDNSMessages.framed(message) else { return }
        if connection.output.isEmpty { connection.stalledSince = ConnectionTracker.now() }
        connection.output += framed
    }

    /// Hands one query to the service. A reply given before the call returns (a cache hit) is
    /// returned to be written at once; a later one (a miss) comes back through the queue.
    func ask(_ message: [UInt8], on connection: Connection) -> (promised: Bool, immediate: [UInt8]?) {
        let server = self.server, handoff = ReplyHandoff(), id = connection.id
        let account = connection.account, peer = connection.peer
        let startedAt = server.options.accessLog ? AccessLog.now() : nil
        let promised = server.service.answerPlainDNS(
            message, account: account, peer: peer, transport: .dot, metrics: server.dnsMetrics
        ) { reply in
            if let startedAt { Self.logAccess(reply, account: account, peer: peer, startedAt: startedAt) }
            if !handoff.keep(reply) { server.send(DoTServer.Outgoing(connection: id, message: reply)) }
        }
        return (promised, handoff.close())
    }

    /// The access-log line of one answered query: `access dot NOERROR`, with the protocol, the
    /// response code, duration, account, size and peer (never the name asked).
    static func logAccess(_ reply: [UInt8], account: String, peer: PeerAddress, startedAt: Double) {
        guard Log.isEnabled(.info), reply.count >= 4 else { return }
        let rcode = Int(reply[3] & 0x0F)
        let names = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"]
        let text = rcode < names.count ? names[rcode] : "RCODE\(rcode)"
        let milliseconds = (AccessLog.now() - startedAt) * 1000
        Log.write(
            .info, "access dot \(text)",
            fields: [
                ("protocol", "dot"), ("rcode", text), ("duration_ms", Double(Int(milliseconds * 1000)) / 1000), ("account", account),
                ("bytes", reply.count), ("peer", peer.text),
            ], buffered: true)
    }
}

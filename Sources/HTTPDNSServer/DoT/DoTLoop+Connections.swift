import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Accepting, reading, writing and closing the DoT connections.
extension DoTLoop {
    /// Accepts every waiting connection under the limits: one over `perAddressLimit` from its
    /// client, or over `connectionLimit` when no other client holds two more to shed one of, is
    /// closed at once (counted).
    func accept() {
        while let (fd, from) = PlainDNSSocketAddress.accept(listening) {
            guard let peer = from.peer, admit(peer) else {
                close(fd)
                continue
            }
            let now = ConnectionTracker.now()
            let tracked = TrackedConnection(fd: fd, client: server.options.keying.key(peer), certificates: nil, since: now)
            let tls: TLSSession
            do throws(DoTServerError) {
                tls = try TLSSession(fd: fd, context: server.context)
            } catch {
                Log.error("DoT: \(error)")
                close(fd)
                continue
            }
            table.add(tracked)
            let id = nextConnectionID
            nextConnectionID += 1
            let connection = Connection(id: id, fd: fd, peer: peer, tls: tls, tracked: tracked, now: now)
            connections[id] = connection
            connectionByFD[fd] = id
            server.metrics.connectionsOpen.add(1, ordering: .relaxed)
            updateWatch(connection)
        }
    }

    /// Whether a connection from `peer` may be kept (closing another one to make room).
    private func admit(_ peer: PeerAddress) -> Bool {
        let options = server.options
        switch table.admit(options.keying.key(peer), connectionLimit: options.connectionLimit, perClient: options.perAddressLimit) {
        case .admitted:
            return true
        case .shed(let victim):
            server.metrics.shed.increment()
            if let id = connectionByFD[victim.fd] { closeConnection(id) }
            return true
        case .atLimit:
            server.metrics.refused[DoTMetrics.index(.limit)].increment()
        case .perAddress:
            server.metrics.refused[DoTMetrics.index(.perAddress)].increment()
        }
        return false
    }

    /// Reads what the connection has and hands each whole query to the service (as many as
    /// may be in flight); writes what is due.
    func read(_ connection: Connection) {
        var failed = false
        reading: while !connection.readClosed && connection.reader.pendingCount < 2 + 65_535 {
            let step = buffer.withUnsafeMutableBytes { connection.tls.receive(into: $0) }
            switch step {
            case .done(let count):
                buffer.withUnsafeBytes { connection.reader.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            case .again:
                connection.waitsForWrite = connection.tls.wantsWrite
                break reading
            case .retry:
                continue
            case .closed:
                connection.readClosed = true
            case .failed:
                failed = true
                break reading
            }
        }
        while connection.inFlight < Self.maxInFlight, let message = connection.reader.next() {
            connection.gotQuery = true
            let (promised, immediate) = ask(message, on: connection)
            if let immediate {
                append(immediate, to: connection)
            } else if promised {
                connection.inFlight += 1
            }
        }
        if failed {
            closeConnection(connection.id)
        } else if write(connection) {
            finishOrWatch(connection)
        }
    }

    /// After a response came or the socket became writable: writes, then reads on (queries held
    /// back at the in-flight limit, or records GnuTLS holds decrypted, which no readiness shows).
    func flush(_ connection: Connection) {
        guard write(connection) else { return }
        if mayRead(connection) { read(connection) } else { finishOrWatch(connection) }
    }

    /// Writes what the connection has to send, as far as the socket takes it; false when the
    /// connection failed and is closed.
    private func write(_ connection: Connection) -> Bool {
        while !connection.output.isEmpty {
            let size = connection.sending > 0 ? connection.sending : min(connection.output.count, Self.recordSize)
            let step = connection.output.withUnsafeBytes { connection.tls.send(UnsafeRawBufferPointer(rebasing: $0[0..<size])) }
            switch step {
            case .done(let sent):
                connection.output.removeFirst(sent)
                connection.sending = 0
                connection.stalledSince = connection.output.isEmpty ? nil : ConnectionTracker.now()
            case .again:
                connection.sending = size
                return true
            case .retry:
                connection.sending = size
            case .closed, .failed:
                closeConnection(connection.id)
                return false
            }
        }
        return true
    }

    private func mayRead(_ connection: Connection) -> Bool {
        !connection.readClosed && connection.inFlight < Self.maxInFlight && connection.output.count < Self.maxOutput
    }

    /// Closes a connection whose peer is done with it and that has nothing left to send; else
    /// settles its phase and watches it for what it waits for.
    private func finishOrWatch(_ connection: Connection) {
        if connection.readClosed && connection.inFlight == 0 && connection.output.isEmpty {
            closeConnection(connection.id)
            return
        }
        // Bytes of a query count as the client's to finish only while the listener reads: held
        // back by its own limits, the connection waits for the listener (or for the client to
        // take its answers, which the stall deadline covers).
        let phase = DoTTimeouts.phase(
            gotQuery: connection.gotQuery, partial: connection.reader.pendingCount > 0 && mayRead(connection),
            wholeWaiting: connection.reader.hasMessage, inFlight: connection.inFlight)
        if phase != connection.phase {
            connection.phase = phase
            connection.since = ConnectionTracker.now()
            connection.tracked.enter(phase, at: connection.since)
        }
        updateWatch(connection)
    }

    /// During the handshake: the direction GnuTLS waits for. After: readable while the peer
    /// may send and the connection is under its limits; writable while output waits.
    func updateWatch(_ connection: Connection) {
        let readable: Bool, writable: Bool
        if connection.established {
            readable = mayRead(connection)
            writable = !connection.output.isEmpty || (connection.waitsForWrite && readable)
        } else {
            readable = !connection.waitsForWrite
            writable = connection.waitsForWrite
        }
        guard readable != connection.watchedReadable || writable != connection.watchedWritable else { return }
        epoll.watch(connection.fd, readable: readable, writable: writable)
        connection.watchedReadable = readable
        connection.watchedWritable = writable
    }

    func closeConnection(_ id: UInt64) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        connectionByFD[connection.fd] = nil
        table.remove(connection.tracked)
        epoll.watch(connection.fd, readable: false, writable: false)
        if connection.established { connection.tls.bye() }
        close(connection.fd)
        server.metrics.connectionsOpen.subtract(1, ordering: .relaxed)
    }

    /// Closes the connections past their deadline (`DoTTimeouts`).
    func cutOverdue(now: Int) {
        var due: [(UInt64, DoTTimeouts.Cut)] = []
        for connection in connections.values {
            if let cut = timeouts.cut(phase: connection.phase, since: connection.since, stalledSince: connection.stalledSince, now: now) {
                due.append((connection.id, cut))
            }
        }
        for (id, cut) in due {
            server.metrics.cut[DoTMetrics.index(cut)].increment()
            closeConnection(id)
        }
    }
}

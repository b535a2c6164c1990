import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// DNS over TCP (RFC 7766): connections accepted up to `tcpConnectionLimit`, queries read
/// from the two-byte-length framing, responses written as they complete, connections closed
/// after `tcpIdleTimeout` seconds with nothing in flight.
extension PlainDNSLoop {
    /// Accepts every waiting connection; one beyond the limit is closed at once.
    func accept() {
        while let (fd, from) = PlainDNSSocketAddress.accept(sockets.tcp) {
            guard connections.count < server.options.tcpConnectionLimit, let peer = from.peer else {
                server.metrics.connectionsRefused.increment()
                close(fd)
                continue
            }
            let id = nextConnectionID
            nextConnectionID += 1
            connections[id] = Connection(id: id, fd: fd, peer: peer, lastActive: MonotonicTime.now())
            connectionByFD[fd] = id
            server.metrics.connectionsOpen.add(1, ordering: .relaxed)
            updateWatch(id)
        }
    }

    /// Reads what the connection has and hands each whole query to the service.
    func read(_ id: UInt64) {
        guard var connection = connections[id] else { return }
        var failed = false
        while !connection.readClosed && connection.reader.pendingCount < 2 + 65_535 {
            let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.withUnsafeBytes { connection.reader.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                connection.lastActive = MonotonicTime.now()
            } else if count == 0 {
                connection.readClosed = true
            } else if errno == EINTR {
                continue
            } else {
                failed = errno != EAGAIN && errno != EWOULDBLOCK
                break
            }
        }
        while connection.inFlight < Self.maxInFlight, let message = connection.reader.next() {
            let (promised, immediate) = ask(message, peer: connection.peer, transport: .tcp, destination: .tcp(connection: id))
            if let immediate {
                if let framed = PlainDNSMessages.framed(immediate), !immediate.isEmpty { connection.output += framed }
            } else if promised {
                connection.inFlight += 1
            }
        }
        connections[id] = connection
        if failed {
            closeConnection(id)
        } else if write(id) {
            finishOrWatch(id)
        }
    }

    /// After a reply came or the socket became writable: writes, then reads the queries held
    /// back while the connection was at its in-flight limit.
    func flush(_ id: UInt64) {
        guard write(id), let connection = connections[id] else { return }
        if connection.inFlight < Self.maxInFlight && connection.reader.hasMessage { read(id) } else { finishOrWatch(id) }
    }

    /// Writes what the connection has to send, as far as the socket takes it; false when the
    /// connection failed and is closed.
    private func write(_ id: UInt64) -> Bool {
        guard var connection = connections[id] else { return false }
        var failed = false
        while !connection.output.isEmpty {
            let sent = connection.output.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                connection.output.removeFirst(sent)
                connection.lastActive = MonotonicTime.now()
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                failed = sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK
                break
            }
        }
        connections[id] = connection
        if failed { closeConnection(id) }
        return !failed
    }

    /// Closes a connection whose peer is done with it and that has nothing left to send; else
    /// watches it for what it waits for.
    private func finishOrWatch(_ id: UInt64) {
        guard let connection = connections[id] else { return }
        if connection.readClosed && connection.inFlight == 0 && connection.output.isEmpty {
            closeConnection(id)
        } else {
            updateWatch(id)
        }
    }

    /// Readable while the peer may send and the connection is under its limits; writable while
    /// output waits.
    private func updateWatch(_ id: UInt64) {
        guard let connection = connections[id] else { return }
        let readable =
            !connection.readClosed && connection.inFlight < Self.maxInFlight && connection.output.count < Self.maxOutput
        let writable = !connection.output.isEmpty
        guard readable != connection.watchedReadable || writable != connection.watchedWritable else { return }
        if readable || writable {
            epoll.watch(connection.fd, readable: readable, writable: writable)
        } else {
            epoll.watch(connection.fd, readable: false, writable: false)
        }
        connections[id]!.watchedReadable = readable
        connections[id]!.watchedWritable = writable
    }

    func closeConnection(_ id: UInt64) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        connectionByFD[connection.fd] = nil
        epoll.watch(connection.fd, readable: false, writable: false)
        close(connection.fd)
        server.metrics.connectionsOpen.subtract(1, ordering: .relaxed)
    }

    /// Closes the connections with nothing in flight that have been quiet for the idle timeout.
    func closeIdle(now: Double) {
        let timeout = server.options.tcpIdleTimeout
        let idle = connections.values.filter { $0.inFlight == 0 && now - $0.lastActive >= timeout }
        for connection in idle { closeConnection(connection.id) }
    }
}

import HTTPDNSLoop

/// The HTTP/1.1 client's open connections by descriptor, and the epoll set they are in (the
/// curl loop's). A ready descriptor found here is the client's; any other is curl's: both are
/// open descriptors, so they never share a number at the same time. Confined to the loop thread.
final class HTTP1SocketTable {
    let sockets: EpollSet
    /// Read for every ready descriptor, confined to the loop thread and never accessed
    /// re-entrantly: without the runtime's exclusivity check.
    @exclusivity(unchecked) private var connections: [HTTP1Connection?] = []

    init(sockets: EpollSet) {
        self.sockets = sockets
    }

    func insert(_ connection: HTTP1Connection) {
        let index = Int(connection.fd)
        if index >= connections.count { connections.append(contentsOf: repeatElement(nil, count: index + 1 - connections.count)) }
        connections[index] = connection
    }

    func remove(_ connection: HTTP1Connection) {
        let index = Int(connection.fd)
        if index < connections.count, connections[index] === connection { connections[index] = nil }
    }

    func connection(for fd: Int32) -> HTTP1Connection? {
        let index = Int(fd)
        return index >= 0 && index < connections.count ? connections[index] : nil
    }

    /// Every open connection, removed from the table (the loop is ending).
    func removeAll() -> [HTTP1Connection] {
        let all = connections.compactMap { $0 }
        connections.removeAll()
        return all
    }
}

@available(*, unavailable)
extension HTTP1SocketTable: Sendable {}

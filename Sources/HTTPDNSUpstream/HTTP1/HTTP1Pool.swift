import HTTPDNSCore
import HTTPDNSLoop

/// The connections of the HTTP/1.1 client to one origin. Confined to the loop thread.
///
/// A request takes the most recently used idle connection (LIFO: the warmest, and the least
/// likely to have been closed by the server's idle timeout), else a new one while fewer than
/// `maxConnections` are open, else it waits in line (FIFO) for a connection to come free; its
/// time in line counts against its timeout. At most `maxIdle` idle connections are kept.
final class HTTP1Pool {
    let origin: HTTP1Origin
    private let table: HTTP1SocketTable
    private let maxConnections: Int
    private let maxIdle: Int
    // Used on every transfer, confined to the loop thread and never accessed re-entrantly (no
    // completion runs while one of them is changed): without the runtime's exclusivity checks.
    @exclusivity(unchecked) private var idle: [HTTP1Connection] = []
    /// Transfers waiting for a connection, from `waitingHead` on (finished ones are skipped).
    @exclusivity(unchecked) private var waiting: [HTTP1Transfer] = []
    @exclusivity(unchecked) private var waitingHead = 0
    /// Connections open to the origin: connecting, busy or idle.
    private(set) var openCount = 0

    init(origin: HTTP1Origin, table: HTTP1SocketTable, maxConnections: Int, maxIdle: Int) {
        self.origin = origin
        self.table = table
        self.maxConnections = max(1, maxConnections)
        self.maxIdle = max(0, maxIdle)
    }

    /// Sends `transfer` on a connection, or queues it until one is free.
    func submit(_ transfer: HTTP1Transfer) {
        if let connection = idle.popLast() {
            run(transfer, on: connection)
        } else if openCount < maxConnections {
            runOnNewConnection(transfer)
        } else {
            waiting.append(transfer)
        }
    }

    /// `connection`'s socket is ready.
    func handle(_ connection: HTTP1Connection, ready: EpollSet.Readiness, scratch: UnsafeMutableRawBufferPointer) {
        settle(connection, connection.handle(ready, scratch: scratch))
    }

    /// `transfer` reached its deadline: it ends with `.timeout`, and the connection carrying it
    /// (its response unfinished) is closed.
    func timeOut(_ transfer: HTTP1Transfer) {
        if let connection = transfer.connection {
            connection.transfer = nil
            discard(connection)
            startWaiting()
        }
        transfer.finish(.failure(HTTP1Failure.timeout(max(1, transfer.request.timeoutMilliseconds))))
    }

    /// The loop is ending: fails what waits (the table fails what runs) and forgets the idle.
    func failWaiting(_ error: UpstreamError) {
        while let transfer = nextWaiting() { transfer.finish(.failure(error)) }
        idle.removeAll()
    }

    private func runOnNewConnection(_ transfer: HTTP1Transfer) {
        let connection: HTTP1Connection
        do throws(LoopCall.Failure) {
            connection = try HTTP1Connection(to: origin, pool: self, sockets: table.sockets)
        } catch {
            transfer.finish(.failure(HTTP1Failure.connect(error.description)))
            return
        }
        openCount += 1
        table.insert(connection)
        run(transfer, on: connection)
    }

    private func run(_ transfer: HTTP1Transfer, on connection: HTTP1Connection) {
        transfer.connection = connection
        settle(connection, connection.begin(transfer, authority: origin.authority))
    }

    private func settle(_ connection: HTTP1Connection, _ outcome: HTTP1Connection.Outcome) {
        switch outcome {
        case .pending:
            return
        case .idleClosed:
            if let index = idle.firstIndex(where: { $0 === connection }) { idle.remove(at: index) }
            discard(connection)
        case .completed(let response, let reusable):
            let transfer = connection.transfer
            connection.transfer = nil
            if reusable {
                release(connection)
            } else {
                discard(connection)
                startWaiting()
            }
            transfer?.finish(.success(response))
        case .failed(let error, let stale):
            let transfer = connection.transfer
            connection.transfer = nil
            discard(connection)
            if let transfer, stale, !transfer.retried {
                // The server closed the idle keep-alive connection as the request went out: the
                // request never reached it, so it is sent once more on a fresh connection.
                transfer.retried = true
                transfer.connection = nil
                runOnNewConnection(transfer)
                return
            }
            startWaiting()
            transfer?.finish(.failure(error))
        }
    }

    /// A connection came free: the next waiting transfer takes it, else it is kept idle (or
    /// closed when `maxIdle` are kept already).
    private func release(_ connection: HTTP1Connection) {
        if let next = nextWaiting() {
            run(next, on: connection)
        } else if idle.count < maxIdle {
            idle.append(connection)
        } else {
            discard(connection)
        }
    }

    /// Opens connections for waiting transfers while the limit allows.
    private func startWaiting() {
        while openCount < maxConnections, let next = nextWaiting() { runOnNewConnection(next) }
    }

    private func discard(_ connection: HTTP1Connection) {
        table.remove(connection)
        connection.close()
        openCount -= 1
    }

    /// The first waiting transfer that has not ended (by its timeout) in the meantime.
    private func nextWaiting() -> HTTP1Transfer? {
        defer {
            if waitingHead > 64 && waitingHead * 2 > waiting.count {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
        }
        while waitingHead < waiting.count {
            let transfer = waiting[waitingHead]
            waitingHead += 1
            if !transfer.isDone { return transfer }
        }
        waiting.removeAll(keepingCapacity: true)
        waitingHead = 0
        return nil
    }
}

@available(*, unavailable)
extension HTTP1Pool: Sendable {}

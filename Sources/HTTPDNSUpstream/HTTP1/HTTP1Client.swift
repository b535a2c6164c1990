import HTTPDNSCore
import HTTPDNSLoop

/// httpdnsd's own HTTP/1.1 keep-alive client for plain `http://` upstreams whose host is an
/// address literal, run by the curl loop thread beside libcurl, in the same epoll set.
///
/// A cache miss against such an upstream cost several times more in libcurl (building the
/// request, re-parsing the URL, a liveness `poll` on every reused connection, `epoll_ctl` calls
/// on every transfer, many small allocations) than the request itself is worth. Here a request
/// is serialised into a buffer its connection keeps, a reused connection needs no `epoll_ctl`,
/// and the response is parsed in place. Every other URL (https, host names) stays with curl.
///
/// Confined to the loop thread. Completions are called on it with the semantics of
/// ``CurlEventLoop/perform(_:completion:)``.
final class HTTP1Client {
    private let table: HTTP1SocketTable
    /// One pool per origin, in the order of first use.
    private var pools: [HTTP1Pool] = []
    /// Read on every turn of the host loop: confined to the loop thread and never accessed
    /// re-entrantly, so without the runtime's exclusivity check (about 60 instructions a turn).
    @exclusivity(unchecked) private var deadlines = HTTP1DeadlineHeap()
    /// Where every connection reads into; what is read goes straight to its parser.
    private let scratch: UnsafeMutableRawBufferPointer
    private let maxConnectionsPerHost: Int
    private let maxIdlePerHost: Int

    init(sockets: EpollSet, maxConnectionsPerHost: Int, maxIdlePerHost: Int) {
        table = HTTP1SocketTable(sockets: sockets)
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxIdlePerHost = maxIdlePerHost
        scratch = .allocate(byteCount: 64 << 10, alignment: 16)
    }

    deinit {
        scratch.deallocate()
    }

    /// Takes `pending` when its URL is one this client serves (false: curl's); `now` is the
    /// monotonic time in milliseconds its timeout counts from.
    func start(_ pending: PendingTransfer, now: Int64) -> Bool {
        var url = pending.request.url
        let found = url.withUTF8 { bytes -> (HTTP1Pool, Int)? in
            guard let target = HTTP1Origin.locate(bytes) else { return nil }
            let authority = UnsafeBufferPointer(rebasing: bytes[7..<target])
            // A few origins at most: comparing bytes beats hashing them.
            if let pool = pools.first(where: { $0.origin.matches(authority) }) { return (pool, target) }
            guard let origin = HTTP1Origin(authority: authority) else { return nil }
            let pool = HTTP1Pool(origin: origin, table: table, maxConnections: maxConnectionsPerHost, maxIdle: maxIdlePerHost)
            pools.append(pool)
            return (pool, target)
        }
        guard let (pool, target) = found else { return false }
        let transfer = HTTP1Transfer(
            request: pending.request, target: target, deadline: now + Int64(max(1, pending.request.timeoutMilliseconds)),
            completion: pending.completion)
        deadlines.insert(transfer)
        pool.submit(transfer)
        return true
    }

    /// Handles `ready` when its descriptor is one of this client's connections (false: curl's).
    func handle(_ ready: EpollSet.Readiness) -> Bool {
        guard let connection = table.connection(for: ready.fd) else { return false }
        connection.pool.handle(connection, ready: ready, scratch: scratch)
        return true
    }

    /// Transfers running or waiting, and finished ones not yet dropped.
    var transfersHeld: Int { deadlines.count }

    /// No transfer running or waiting (finished ones not yet dropped count until the next
    /// ``nextDeadline()``).
    var isIdle: Bool { deadlines.isEmpty }

    /// The earliest deadline of a running or waiting transfer (monotonic milliseconds).
    func nextDeadline() -> Int64? {
        guard !deadlines.isEmpty else { return nil }
        deadlines.dropFinished()
        return deadlines.earliest
    }

    /// Ends every transfer whose deadline is at or before `now` with `.timeout`.
    func expire(now: Int64) {
        while let transfer = deadlines.popExpired(now: now) {
            if let connection = transfer.connection {
                connection.pool.timeOut(transfer)
            } else {
                // Waiting in its pool's line, which skips it from now on.
                transfer.finish(.failure(HTTP1Failure.timeout(max(1, transfer.request.timeoutMilliseconds))))
            }
        }
    }

    /// The loop is ending: fails every running and waiting transfer with `error` and closes every
    /// connection.
    func shutdown(_ error: UpstreamError) {
        for connection in table.removeAll() {
            let transfer = connection.transfer
            connection.transfer = nil
            connection.close()
            transfer?.finish(.failure(error))
        }
        for pool in pools { pool.failWaiting(error) }
        pools.removeAll()
        deadlines.removeAll()
    }
}

@available(*, unavailable)
extension HTTP1Client: Sendable {}

import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// One non-blocking TCP connection of the HTTP/1.1 client, carrying one request at a time.
/// Confined to the loop thread; owned by its ``HTTP1Pool``.
///
/// States: connecting → writing → reading → idle (keep-alive, waiting for the next request) or
/// closed. Each call returns an ``Outcome`` for the pool to act on; the connection never decides
/// about other connections or transfers. The socket is in the epoll set for reading from its
/// first request on, so an idle connection notices the server closing it, and a reused one
/// needs no `epoll_ctl` per request: writability is asked for only while a write would block.
final class HTTP1Connection {
    enum State: Equatable {
        case connecting
        case writing
        case reading
        case idle
        case closed
    }

    /// What the pool does next with the connection and its transfer.
    enum Outcome {
        /// Waiting for the socket.
        case pending
        /// The response is complete; `reusable`: the connection can carry another request.
        case completed(UpstreamHTTPResponse, reusable: Bool)
        /// The transfer failed and the connection is unusable. `stale`: it was a keep-alive
        /// connection the server had closed before any byte of this response came (the request
        /// can be sent again on a fresh connection).
        case failed(UpstreamError, stale: Bool)
        /// An idle connection was closed by the server (or sent bytes no request asked for).
        case idleClosed
    }

    let fd: Int32
    let pool: HTTP1Pool
    /// The transfer being carried, nil while idle.
    var transfer: HTTP1Transfer?
    private(set) var state: State
    /// A response completed on this connection before: a failure before the next one's first
    /// byte means the server closed it while idle.
    private var hasServed = false
    // The request buffer and the parser are used on every miss, confined to the loop thread and
    // never accessed re-entrantly (a step returns an `Outcome`; the transfer completes after it):
    // without the runtime's exclusivity checks.
    @exclusivity(unchecked) private var request: [UInt8] = []
    @exclusivity(unchecked) private var written = 0
    @exclusivity(unchecked) private var parser = HTTP1ResponseParser()
    private let sockets: EpollSet
    private var registered = false
    private var watchingWrite = false

    /// `socket(SOCK_NONBLOCK | SOCK_CLOEXEC)`, `TCP_NODELAY` and a non-blocking `connect` to `origin`.
    init(to origin: HTTP1Origin, pool: HTTP1Pool, sockets: EpollSet) throws(LoopCall.Failure) {
        let family = origin.address.family
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = try LoopCall.system("socket") { socket(family, type, 0) }
        var connected = false
        do throws(LoopCall.Failure) {
            var one: Int32 = 1
            try LoopCall.system("setsockopt(TCP_NODELAY)") {
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            do throws(LoopCall.Failure) {
                try LoopCall.system("connect") { origin.address.withSockaddr { connect(fd, $0, $1) } }
                connected = true
            } catch  where error.errorNumber == EINPROGRESS {
                // Completes when the socket turns writable.
            }
        } catch {
            Self.close(fd)
            throw error
        }
        self.fd = fd
        self.pool = pool
        self.sockets = sockets
        state = connected ? .writing : .connecting
    }

    /// Serialises `transfer`'s request and sends what the socket takes now.
    func begin(_ transfer: HTTP1Transfer, authority: [UInt8]) -> Outcome {
        self.transfer = transfer
        HTTP1RequestWriter.write(transfer.request, target: transfer.target, authority: authority, into: &request)
        written = 0
        switch state {
        case .connecting:
            watch(write: true)
            return .pending
        default:
            state = .writing
            return writeRequest()
        }
    }

    /// The socket is ready for what `ready` says; `scratch` receives what is read.
    func handle(_ ready: EpollSet.Readiness, scratch: UnsafeMutableRawBufferPointer) -> Outcome {
        switch state {
        case .connecting:
            // Only writability or an error ends a connect (a readiness left over from a closed
            // socket that had the same number says nothing).
            guard ready.writable || ready.failed else { return .pending }
            if let failure = connectError() { return .failed(HTTP1Failure.connect(failure), stale: false) }
            state = .writing
            return writeRequest()
        case .writing:
            // A server may answer (or close) before it has read the whole request: what came is
            // read now, or the readiness, level-triggered, would come straight back and spin.
            if ready.readable || ready.failed {
                let early = readResponse(scratch, requestSent: false)
                guard case .pending = early else { return early }
            }
            return ready.writable ? writeRequest() : .pending
        case .reading:
            return readResponse(scratch, requestSent: true)
        case .idle:
            return readWhileIdle(scratch)
        case .closed:
            return .pending
        }
    }

    /// Leaves the epoll set and closes the socket.
    func close() {
        guard state != .closed else { return }
        state = .closed
        if registered { sockets.watch(fd, readable: false, writable: false) }
        Self.close(fd)
    }

    private static func close(_ fd: Int32) {
        do throws(LoopCall.Failure) {
            try LoopCall.system("close") { Glibc.close(fd) }
        } catch {
            LoopCall.report(error)
        }
    }

    /// Watches for reading always, and for writing when `write`; calls `epoll_ctl` only on a change.
    private func watch(write: Bool) {
        guard !registered || watchingWrite != write else { return }
        sockets.watch(fd, readable: true, writable: write)
        registered = true
        watchingWrite = write
    }

    /// `SO_ERROR` of a connect that finished: nil when it succeeded.
    private func connectError() -> String? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        do throws(LoopCall.Failure) {
            try LoopCall.system("getsockopt(SO_ERROR)") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) }
        } catch {
            return error.description
        }
        return code == 0 ? nil : "\(String(cString: strerror(code))) (errno \(code))"
    }

    private func writeRequest() -> Outcome {
        while written < request.count {
            let sent: Int
            do throws(LoopCall.Failure) {
                sent = try LoopCall.system("send") {
                    request.withUnsafeBytes { send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
                }
            } catch  where error.errorNumber == EAGAIN || error.errorNumber == EWOULDBLOCK {
                watch(write: true)
                return .pending
            } catch {
                let stale = hasServed && (error.errorNumber == EPIPE || error.errorNumber == ECONNRESET)
                return .failed(HTTP1Failure.send(error.description), stale: stale)
            }
            written += sent
        }
        state = .reading
        watch(write: false)
        return .pending
    }

    /// Reads what the socket has into the parser. `requestSent`: the whole request went out (a
    /// response that comes before that ends the connection's use).
    private func readResponse(_ scratch: UnsafeMutableRawBufferPointer, requestSent: Bool) -> Outcome {
        let count: Int
        do throws(LoopCall.Failure) {
            count = try LoopCall.system("recv") { recv(fd, scratch.baseAddress, scratch.count, 0) }
        } catch  where error.errorNumber == EAGAIN || error.errorNumber == EWOULDBLOCK {
            return .pending
        } catch {
            let stale = hasServed && !parser.receivedAny && error.errorNumber == ECONNRESET
            return .failed(HTTP1Failure.receive(error.description), stale: stale)
        }
        guard count > 0 else {
            do throws(HTTP1ResponseParser.Failure) {
                try parser.finishAtEOF()
            } catch {
                let receivedAny = parser.receivedAny
                return .failed(HTTP1Failure.closed(receivedAny: receivedAny), stale: hasServed && !receivedAny)
            }
            return complete(reusable: false)
        }
        let used: Int
        do throws(HTTP1ResponseParser.Failure) {
            used = try parser.consume(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
        } catch {
            return .failed(HTTP1Failure.response(error), stale: false)
        }
        guard parser.isComplete else { return .pending }
        // Bytes after the response answer no request: the connection is not trusted again.
        return complete(reusable: requestSent && parser.keepAlive && used == count)
    }

    private func complete(reusable: Bool) -> Outcome {
        let response = UpstreamHTTPResponse(status: parser.status, headerBlock: parser.headerBlock, body: parser.body)
        parser.reset()
        hasServed = true
        if reusable { state = .idle }
        return .completed(response, reusable: reusable)
    }

    /// Readable while no request is out: the server closed the connection (EOF or an error), or
    /// sent something unasked. Either way it is not used again.
    private func readWhileIdle(_ scratch: UnsafeMutableRawBufferPointer) -> Outcome {
        do throws(LoopCall.Failure) {
            _ = try LoopCall.system("recv") { recv(fd, scratch.baseAddress, scratch.count, 0) }
        } catch  where error.errorNumber == EAGAIN || error.errorNumber == EWOULDBLOCK {
            return .pending
        } catch {
            // Reset by the server: closed all the same.
        }
        return .idleClosed
    }
}

@available(*, unavailable)
extension HTTP1Connection: Sendable {}

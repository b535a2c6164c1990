import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// One probe in flight on the prober thread: a non-blocking socket, what `poll(2)` waits for on
/// it, and when it gives up. Confined to that thread; ``close()`` exactly once.
final class ProbeSocket {
    /// What the socket is waiting for.
    enum Kind {
        /// A TCP `connect(2)` that completes when the socket turns writable.
        case tcpConnect
        /// An ICMP echo request (type 8, or 128 for ICMPv6) waiting for the reply with `sequence`.
        case icmpEcho(sequence: UInt16, replyType: UInt8)
    }

    /// How starting a probe went: still running, or finished at once.
    enum Start {
        case inFlight(ProbeSocket)
        case finished(ProbeResult)
    }

    let descriptor: Int32
    let kind: Kind
    /// `MonotonicTime` when the connect or echo request was issued.
    let started: Double
    /// `MonotonicTime` after which the probe counts as unreachable.
    let deadline: Double

    private init(descriptor: Int32, kind: Kind, started: Double, deadline: Double) {
        self.descriptor = descriptor
        self.kind = kind
        self.started = started
        self.deadline = deadline
    }

    /// The `poll(2)` events the probe waits for.
    var events: Int16 {
        switch kind {
        case .tcpConnect: Int16(POLLOUT)
        case .icmpEcho: Int16(POLLIN)
        }
    }

    /// Starts a non-blocking TCP `connect(2)` to `address`.
    static func connect(to address: SocketAddress, timeout: Double) -> Start {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(address.family, type, 0)
        guard descriptor >= 0 else { return .finished(.unreachable) }
        // Close with a reset: a probe leaves no TIME_WAIT behind to exhaust ephemeral ports.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        let started = MonotonicTime.now()
        let status = address.withSockaddr { Glibc.connect(descriptor, $0, $1) }
        if status == 0 {
            let elapsed = MonotonicTime.now() - started
            Glibc.close(descriptor)
            return .finished(.reachable(seconds: elapsed))
        }
        guard errno == EINPROGRESS else {
            Glibc.close(descriptor)
            return .finished(.unreachable)
        }
        return .inFlight(ProbeSocket(descriptor: descriptor, kind: .tcpConnect, started: started, deadline: started + timeout))
    }

    /// Sends one ICMP echo request to `address` through an unprivileged ICMP socket
    /// (`socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)` or the ICMPv6 one). The kernel fills in the
    /// identifier and the checksum and delivers only replies to this socket.
    static func echo(to address: SocketAddress, sequence: UInt16, timeout: Double) -> Start {
        let isV6 = address.family == AF_INET6
        guard let descriptor = openICMPSocket(family: address.family) else { return .finished(.unreachable) }
        // Connected, so that ICMP errors (host unreachable) are reported on the socket.
        let connected = address.withSockaddr { Glibc.connect(descriptor, $0, $1) }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return .finished(.unreachable)
        }
        let requestType: UInt8 = isV6 ? 128 : 8
        // type, code, checksum (kernel), identifier (kernel), sequence, 8 bytes of payload.
        var packet: [UInt8] = [requestType, 0, 0, 0, 0, 0, UInt8(sequence >> 8), UInt8(sequence & 0xff)]
        packet += Array("httpdnsd".utf8)
        let started = MonotonicTime.now()
        let sent = send(descriptor, packet, packet.count, Int32(MSG_NOSIGNAL))
        guard sent == packet.count else {
            Glibc.close(descriptor)
            return .finished(.unreachable)
        }
        let kind = Kind.icmpEcho(sequence: sequence, replyType: isV6 ? 129 : 0)
        return .inFlight(ProbeSocket(descriptor: descriptor, kind: kind, started: started, deadline: started + timeout))
    }

    /// A non-blocking unprivileged ICMP (or ICMPv6) datagram socket, or nil when the kernel refuses
    /// it (`EACCES` when the caller's group is outside `net.ipv4.ping_group_range`).
    static func openICMPSocket(family: Int32) -> Int32? {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let proto = family == AF_INET6 ? Int32(IPPROTO_ICMPV6) : Int32(IPPROTO_ICMP)
        let descriptor = socket(family, type, proto)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Reads what `poll(2)` reported (`revents`, observed at `now`); the result once the probe is
    /// decided, nil while it must keep waiting.
    func handle(revents: Int16, now: Double) -> ProbeResult? {
        guard revents != 0 else { return nil }
        switch kind {
        case .tcpConnect:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            let status = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            guard status == 0, error == 0, revents & Int16(POLLOUT) != 0 else { return .unreachable }
            return .reachable(seconds: max(0, now - started))
        case .icmpEcho(let sequence, let replyType):
            var buffer = [UInt8](repeating: 0, count: 1500)
            while true {
                let received = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if received < 0 {
                    if errno == EINTR { continue }
                    // Nothing more queued: keep waiting. Any other error is an ICMP error report.
                    return errno == EAGAIN || errno == EWOULDBLOCK ? nil : .unreachable
                }
                guard received >= 8 else { continue }
                let echoed = UInt16(buffer[6]) << 8 | UInt16(buffer[7])
                if buffer[0] == replyType, echoed == sequence {
                    return .reachable(seconds: max(0, now - started))
                }
            }
        }
    }

    func close() {
        Glibc.close(descriptor)
    }
}

@available(*, unavailable)
extension ProbeSocket: Sendable {}

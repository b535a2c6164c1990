import CMicroHTTPD
import Dispatch
import Foundation
import HTTPDNSCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps one client from taking a listener: the connection limits, enforced at accept time, and
/// the request-read deadline, enforced by a reaper thread.
///
/// - **Accept** (`MHD_AcceptPolicyCallback`, called by libmicrohttpd right after `accept()`): a
///   connection over `perIPConnectionLimit` from its client (`ClientKeying`: an IPv6 peer by its
///   prefix) is refused, and libmicrohttpd closes the socket at once. At `connectionLimit`, the
///   least useful connection of the client holding the most is shut down in its place when
///   that client holds at least two more (`ConnectionTable` has the rule); else it is refused. libmicrohttpd's own limit is set
///   well above ours (it stops accepting at its limit, which would leave new connections
///   waiting in the kernel's backlog), and its per-address limit is not used, so that trusted
///   proxies can be exempt. Counting happens in `MHD_OPTION_NOTIFY_CONNECTION` (started /
///   closed), which libmicrohttpd calls on the accepting thread right after the policy: the
///   limits can be exceeded by at most one connection per worker thread when several accept at
///   the same instant.
/// - **Read deadline**: each connection's `ReadDeadline.Phase` is set from libmicrohttpd's
///   threads (accept, request line via `MHD_OPTION_URI_LOG_CALLBACK`, request complete in the
///   access handler, response done in the completed callback) as one atomic store. The reaper
///   wakes a few times per deadline and calls `shutdown(fd, SHUT_RDWR)` on connections past
///   theirs; libmicrohttpd then sees the socket end on its own thread and closes the connection
///   the usual way. It never closes a socket itself and never calls into libmicrohttpd.
/// - **fd reuse**: the reaper and the shedding call `shutdown` holding the table's lock, and only
///   on connections in the table. libmicrohttpd calls the connection's "closed" notification, which removes it
///   under that same lock, before it closes the socket, so a socket number the reaper shuts down
///   is never one already closed and reused.
final class ConnectionTracker: @unchecked Sendable {
    struct Limits: Sendable {
        var connectionLimit: Int
        var perAddress: Int
        var trustedProxies: [CIDR]
        var deadline: ReadDeadline
        var keying = ClientKeying()
    }

    let limits: Limits
    let certificates: TLSCertificateStore?
    private let locked_table = Mutex(ConnectionTable())
    private let rejectedAtLimitCount = Atomic<Int>(0)
    private let shedCount = Atomic<Int>(0)
    private let rejectedPerAddressCount = Atomic<Int>(0)
    private let closedSlowCount = Atomic<Int>(0)
    /// One warning per reason every 10 s, with the count of those held back.
    private let refusalLog = LogThrottle(interval: 10)
    private let locked_reaperStop = Mutex<Bool>(false)
    private let reaperWake = DispatchSemaphore(value: 0)
    private let reaperDone = DispatchSemaphore(value: 0)
    private let reaperRunning = Atomic<Bool>(false)

    init(limits: Limits, certificates: TLSCertificateStore?) {
        self.limits = limits
        self.certificates = certificates
    }

    /// Connections refused because `connectionLimit` were open.
    var rejectedAtLimit: Int { rejectedAtLimitCount.load(ordering: .relaxed) }
    /// Connections refused because their address had `perIPConnectionLimit` open.
    var rejectedPerAddress: Int { rejectedPerAddressCount.load(ordering: .relaxed) }
    /// Connections shut down because a request did not arrive whole within the read deadline.
    var closedSlow: Int { closedSlowCount.load(ordering: .relaxed) }
    /// Connections shut down at the limit to let in a client holding fewer.
    var shed: Int { shedCount.load(ordering: .relaxed) }
    var openConnections: Int { locked_table.withLock { $0.open.count } }

    /// Milliseconds of a coarse monotonic clock (a vDSO read, no system call).
    static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return time.tv_sec * 1000 + time.tv_nsec / 1_000_000
    }

    // MARK: Accept and lifecycle (libmicrohttpd threads)

    /// Whether a connection from `peer` may be accepted now (shutting down another to make room
    /// when the listener is full; see the type's notes).
    func admit(_ peer: PeerAddress?) -> Bool {
        let client = self.client(peer)
        let verdict = locked_table.withLock { table -> ConnectionTable.Verdict in
            let verdict = table.admit(client, connectionLimit: limits.connectionLimit, perClient: limits.perAddress)
            if case .shed(let victim) = verdict, victim.fd >= 0 { shutdown(victim.fd, Int32(SHUT_RDWR)) }
            return verdict
        }
        switch verdict {
        case .admitted: return true
        case .shed(let victim):
            shedCount.add(1, ordering: .relaxed)
            Log.debug("connection shed for a client holding fewer", [("peer", peer?.text ?? "?"), ("shed", victim.client?.text ?? "?")])
            if let held = refusalLog.admit("shed", now: SystemClock().now()) {
                let shed = victim.client?.text ?? "?"
                Log.warning(
                    "\(limits.connectionLimit) connections open (connectionLimit): closed one of \(shed)'s, the client holding the most, "
                        + "for \(peer?.text ?? "?")\(Self.heldBack(held, what: "such closes"))")
            }
            return true
        case .atLimit:
            rejectedAtLimitCount.add(1, ordering: .relaxed)
            Log.debug("connection refused: connectionLimit reached", [("peer", peer?.text ?? "?"), ("limit", limits.connectionLimit)])
            if let held = refusalLog.admit("limit", now: SystemClock().now()) {
                Log.warning("connection refused: \(limits.connectionLimit) connections open (connectionLimit)\(Self.heldBack(held))")
            }
        case .perAddress:
            rejectedPerAddressCount.add(1, ordering: .relaxed)
            Log.debug("connection refused: perIPConnectionLimit reached", [("peer", peer?.text ?? "?"), ("limit", limits.perAddress)])
            if let held = refusalLog.admit("per_address", now: SystemClock().now()) {
                Log.warning(
                    "connection from \(peer?.text ?? "?") refused: \(limits.perAddress) connections open from that client "
                        + "(perIPConnectionLimit)\(Self.heldBack(held))")
            }
        }
        return false
    }

    /// The key `peer` is counted under; nil for a trusted proxy (not counted per client, never
    /// shed) or an unknown peer.
    private func client(_ peer: PeerAddress?) -> PeerAddress? {
        guard let peer, !isTrusted(peer) else { return nil }
        return limits.keying.key(peer)
    }

    private static func heldBack(_ count: Int, what: String = "refusals") -> String {
        count > 0 ? "; \(count) more \(what) since the last warning" : ""
    }

    private func isTrusted(_ peer: PeerAddress) -> Bool {
        guard !limits.trustedProxies.isEmpty else { return false }
        let address = peer.ipAddress
        return limits.trustedProxies.contains { $0.contains(address) }
    }

    func started(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let record = register(
            peer: chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init), fd: chttpdns_mhd_connection_fd(connection))
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
    }

    func closed(socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard let raw = socketContext.pointee else { return }
        socketContext.pointee = nil
        unregister(Unmanaged<TrackedConnection>.fromOpaque(raw).takeRetainedValue())
    }

    /// Counts a new connection (in `.opening` since `since`, default now).
    @discardableResult
    func register(peer: PeerAddress?, fd: Int32 = -1, since: Int? = nil) -> TrackedConnection {
        let record = TrackedConnection(fd: fd, client: client(peer), certificates: certificates, since: since ?? Self.now())
        locked_table.withLock { $0.add(record) }
        return record
    }

    func unregister(_ record: TrackedConnection) {
        locked_table.withLock { $0.remove(record) }
    }

    /// The request line of a request was parsed; `uri` is its request-target as sent.
    func requestLineReceived(_ connection: OpaquePointer, uri: UnsafePointer<CChar>?) {
        Self.withRecord(connection) { record in
            if let next = ReadDeadline.afterRequestLine(record.phase) { record.enter(next, at: Self.now()) }
            record.rawURI = uri.map(RawRequestURI.init)
        }
    }

    /// The request arrived whole (head and body). Returns its refusal, nil when it may be served:
    /// `RawRequestURI.refusal` when its `method` and `url` (and `version`, as the access handler
    /// got them) are not the whole request line (a NUL cut it short), else 414 or 431 when its
    /// request-target (its length or its arguments) or head is over `headLimits`.
    func requestReceived(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
        headLimits: RequestHeadLimits
    ) -> APIError? {
        var raw: RawRequestURI?
        Self.withRecord(connection) { record in
            record.enter(.handling, at: 0)
            raw = record.rawURI
        }
        guard let raw, let method, let url, let version else { return nil }
        guard raw.isWhole(method: method, url: url, version: version) else { return RawRequestURI.refusal }
        return headLimits.refusal(
            targetLength: raw.length, tooManyArguments: raw.hasTooManyArguments, headLength: chttpdns_mhd_request_head_size(connection))
    }

    /// The response was sent (or the request ended otherwise); the connection waits for another.
    func requestCompleted(_ connection: OpaquePointer) {
        Self.withRecord(connection) { $0.enter(.idle, at: Self.now()) }
    }

    private static func withRecord(_ connection: OpaquePointer, _ body: (TrackedConnection) -> Void) {
        guard let raw = chttpdns_mhd_socket_context(connection) else { return }
        Unmanaged<TrackedConnection>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
    }

    // MARK: Reaper

    /// Starts the reaper thread when there is a read deadline.
    func startReaper() {
        let timeout = limits.deadline.requestReadTimeout
        guard timeout > 0 else { return }
        reaperRunning.store(true, ordering: .releasing)
        // A few passes per deadline, at most one per second.
        let interval = Double(min(1000, max(100, timeout / 4))) / 1000
        let thread = Thread { [self] in
            ThreadName.setCurrent("httpdnsd-reaper")
            while !locked_reaperStop.withLock({ $0 }) {
                reap(now: Self.now())
                _ = reaperWake.wait(timeout: .now() + interval)
            }
            reaperDone.signal()
        }
        thread.start()
    }

    /// Stops the reaper thread and waits for it. Idempotent.
    func stopReaper() {
        guard reaperRunning.exchange(false, ordering: .acquiringAndReleasing) else { return }
        locked_reaperStop.withLock { $0 = true }
        reaperWake.signal()
        reaperDone.wait()
    }

    /// Shuts down every connection past its deadline (see the type's notes on fd reuse).
    func reap(now: Int) {
        let deadline = limits.deadline
        let cut = locked_table.withLock { table -> Int in
            var late: [TrackedConnection] = []
            for record in table.open.values where !record.closing {
                let (phase, since) = record.state
                guard let until = deadline.deadline(phase, since: since), now > until, record.fd >= 0 else { continue }
                shutdown(record.fd, Int32(SHUT_RDWR))
                late.append(record)
            }
            for record in late { table.markClosing(record) }
            return late.count
        }
        if cut > 0 {
            closedSlowCount.add(cut, ordering: .relaxed)
            if let held = refusalLog.admit("slow", now: SystemClock().now()) {
                Log.warning(
                    "closed \(cut) connections whose request did not arrive whole within \(deadline.requestReadTimeout / 1000) s (requestReadTimeout)\(Self.heldBack(held, what: "passes"))"
                )
            }
        }
    }
}

/// One open connection as `ConnectionTracker` sees it; libmicrohttpd's socket context holds a
/// retained reference from the "started" notification to the "closed" one.
final class TrackedConnection: @unchecked Sendable {
    let fd: Int32
    /// The client it is counted under (`ClientKeying`); nil for a trusted proxy or an unknown peer.
    let client: PeerAddress?
    let certificates: TLSCertificateStore?
    /// `since << 2 | phase`, stored by the connection's libmicrohttpd thread, read by the reaper.
    private let packed: Atomic<Int>
    /// Set under the tracker's lock once the reaper or the shedding shut the socket down.
    var closing = false
    /// Its index in its client's list (`ConnectionTable`), under the tracker's lock.
    var slot = 0
    /// The current request's target as sent; written and read by the connection's
    /// libmicrohttpd thread only (the URI log callback, then the access handler).
    var rawURI: RawRequestURI?

    init(fd: Int32, client: PeerAddress?, certificates: TLSCertificateStore?, since: Int) {
        self.fd = fd
        self.client = client
        self.certificates = certificates
        packed = Atomic(since << 2 | ReadDeadline.Phase.opening.rawValue)
    }

    var phase: ReadDeadline.Phase { ReadDeadline.Phase(rawValue: packed.load(ordering: .relaxed) & 3)! }

    var state: (ReadDeadline.Phase, Int) {
        let value = packed.load(ordering: .relaxed)
        return (ReadDeadline.Phase(rawValue: value & 3)!, value >> 2)
    }

    func enter(_ phase: ReadDeadline.Phase, at time: Int) {
        packed.store(time << 2 | phase.rawValue, ordering: .relaxed)
    }
}

extension ConnectionTracker {
    /// `MHD_AcceptPolicyCallback`; `cls` is the tracker.
    static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, address, _ in
        guard let cls else { return .NO }
        let peer = address.flatMap(PeerAddress.init)
        return Unmanaged<ConnectionTracker>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.admit(peer) } ? .YES : .NO
    }

    /// `MHD_NotifyConnectionCallback`; `cls` is the tracker.
    static let notify: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
        guard let cls, let socketContext else { return }
        Unmanaged<ConnectionTracker>.fromOpaque(cls)._withUnsafeGuaranteedRef { tracker in
            if code == .CONNECTION_NOTIFY_STARTED {
                if let connection { tracker.started(connection, socketContext: socketContext) }
            } else {
                tracker.closed(socketContext: socketContext)
            }
        }
    }

    /// `MHD_OPTION_URI_LOG_CALLBACK`; returns NULL, the initial `con_cls` the access handler expects.
    static let uriLog: chttpdns_mhd_uri_log = { cls, uri, connection in
        guard let cls, let connection else { return nil }
        Unmanaged<ConnectionTracker>.fromOpaque(cls)._withUnsafeGuaranteedRef { $0.requestLineReceived(connection, uri: uri) }
        return nil
    }
}

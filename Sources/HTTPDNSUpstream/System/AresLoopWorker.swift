import CAres
import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The resolver thread's side of ``SystemResolver``: owns the c-ares channel (never touched by
/// another thread), starts queued lookups, and drives the channel with `ares_getsock` +
/// `poll(2)` + `ares_process_fd`, enforcing each lookup's deadline itself.
final class AresLoopWorker {
    struct Configuration: Sendable {
        var servers: [String]
        var attemptTimeoutMilliseconds: Int
        var tries: Int
    }

    /// One running lookup; the c-ares callback gets it as `arg` (retained until the callback).
    final class Lookup {
        let pending: PendingLookup
        var completed = false

        init(_ pending: PendingLookup) {
            self.pending = pending
        }

        /// Calls an address lookup's completion unless it was called already (deadline or callback).
        func complete(_ result: Result<UpstreamAnswer, UpstreamError>) {
            guard !completed, case .address(_, let completion) = pending.request else { return }
            completed = true
            completion(result)
        }

        /// Calls a message lookup's completion unless it was called already.
        func complete(_ result: Result<[UInt8], UpstreamError>) {
            guard !completed, case .message(_, let completion) = pending.request else { return }
            completed = true
            completion(result)
        }

        /// Fails the lookup, whichever kind it is, unless it completed already.
        func fail(_ error: UpstreamError) {
            guard !completed else { return }
            completed = true
            pending.fail(error)
        }
    }

    /// What `ares_library_init` returned; c-ares wants it called once per process, before the
    /// first channel, so the first worker to start calls it.
    static let libraryStatus: Int32 = ares_library_init(ARES_LIB_INIT_ALL)

    private let shared: AresLoopShared
    private let configuration: Configuration
    /// The `ares_library_init` status this worker sets up with: ``libraryStatus``, unless a test
    /// gives a failure.
    private let libraryStatus: Int32
    private var channel: ares_channel?
    /// Why the channel could not be set up; every lookup fails with it.
    private var setupError: UpstreamError?
    /// Lookups that have not completed yet, for deadlines.
    private var running: [ObjectIdentifier: Lookup] = [:]

    init(shared: AresLoopShared, configuration: Configuration, libraryStatus: Int32 = AresLoopWorker.libraryStatus) {
        self.shared = shared
        self.configuration = configuration
        self.libraryStatus = libraryStatus
    }

    func run() {
        do throws(UpstreamError) {
            try setUp()
        } catch {
            setupError = error
        }
        while true {
            let (batch, stop) = shared.take()
            if stop {
                tearDown(failing: batch)
                return
            }
            for pending in batch { start(pending) }
            pollOnce()
            expireDeadlines()
        }
    }

    /// Initialises c-ares and creates the channel; what fails here fails every lookup.
    private func setUp() throws(UpstreamError) {
        try AresStatus.check(libraryStatus, "ares_library_init")
        var options = ares_options()
        var mask: Int32 = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES
        options.timeout = Int32(clamping: max(1, configuration.attemptTimeoutMilliseconds))
        options.tries = Int32(clamping: max(1, configuration.tries))
        let lookups = strdup("b")
        defer { free(lookups) }
        if !configuration.servers.isEmpty {
            // Only the given servers: no /etc/hosts, no search domains from resolv.conf.
            mask |= ARES_OPT_FLAGS | ARES_OPT_LOOKUPS
            options.flags = ARES_FLAG_NOSEARCH
            options.lookups = lookups
        }
        var channel: ares_channel?
        let status = ares_init_options(&channel, &options, mask)
        try AresStatus.check(status, "ares_init_options")
        guard let channel else { throw UpstreamError(.transport, "ares_init_options: no channel") }
        self.channel = channel
        if !configuration.servers.isEmpty {
            let csv = configuration.servers.joined(separator: ",")
            try AresStatus.check(ares_set_servers_ports_csv(channel, csv), "bad localDNSServers '\(csv)'")
        }
    }

    private func tearDown(failing batch: [PendingLookup]) {
        let leftover = shared.close()
        let error = UpstreamError(.transport, "the system resolver is shut down")
        for pending in batch + leftover { pending.fail(error) }
        if let channel {
            ares_destroy(channel)  // calls outstanding callbacks with ARES_EDESTRUCTION
        }
        channel = nil
        for lookup in running.values { lookup.fail(error) }
        running.removeAll()
    }

    private func start(_ pending: PendingLookup) {
        guard let channel, setupError == nil else {
            pending.fail(setupError ?? UpstreamError(.transport, "no c-ares channel"))
            return
        }
        let lookup = Lookup(pending)
        running[ObjectIdentifier(lookup)] = lookup
        let context = Unmanaged.passRetained(LookupContext(worker: self, lookup: lookup)).toOpaque()
        switch pending.request {
        case .address(let query, _):
            var hints = ares_addrinfo_hints()
            hints.ai_family = query.family == .a ? AF_INET : AF_INET6
            hints.ai_flags = ARES_AI_NOSORT
            ares_getaddrinfo(channel, query.host.value, nil, &hints, Self.callback, context)
        case .message(let message, _):
            ares_send(channel, message, Int32(clamping: message.count), Self.sendCallback, context)
        }
    }

    private static let sendCallback: ares_callback = { argument, status, _, reply, length in
        guard let argument else { return }
        let context = Unmanaged<LookupContext>.fromOpaque(argument).takeRetainedValue()
        context.worker.running.removeValue(forKey: ObjectIdentifier(context.lookup))
        guard status == ARES_SUCCESS, let reply, length > 0 else {
            let failed = AresStatus.result(status: status, addresses: [])
            if case .failure(let error) = failed {
                context.lookup.fail(error)
            } else {
                context.lookup.fail(
                    UpstreamError(.malformed, "system resolver: \(AresStatus.message(status)) without a reply", underlying: Int(status)))
            }
            return
        }
        context.lookup.complete(DNSReplyCheck.checked(Array(UnsafeBufferPointer(start: reply, count: Int(length)))))
    }

    /// What the c-ares callback needs; retained for exactly one callback.
    private final class LookupContext {
        unowned let worker: AresLoopWorker
        let lookup: Lookup

        init(worker: AresLoopWorker, lookup: Lookup) {
            self.worker = worker
            self.lookup = lookup
        }
    }

    private static let callback: ares_addrinfo_callback = { argument, status, _, result in
        guard let argument else {
            ares_freeaddrinfo(result)
            return
        }
        let context = Unmanaged<LookupContext>.fromOpaque(argument).takeRetainedValue()
        guard case .address(let query, _) = context.lookup.pending.request else {
            ares_freeaddrinfo(result)
            return
        }
        let addresses = status == ARES_SUCCESS ? AresLoopWorker.addresses(result, family: query.family) : []
        ares_freeaddrinfo(result)
        context.worker.running.removeValue(forKey: ObjectIdentifier(context.lookup))
        context.lookup.complete(AresStatus.result(status: status, addresses: addresses))
    }

    /// The distinct addresses of `family` in a getaddrinfo result, in order.
    private static func addresses(_ result: UnsafeMutablePointer<ares_addrinfo>?, family: RecordFamily) -> [String] {
        var output: [String] = []
        var node = result?.pointee.nodes
        while let current = node {
            node = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            var text: String?
            if current.pointee.ai_family == AF_INET, family == .a {
                text = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin_addr
                    return IPAddress(family: .a, bytes: withUnsafeBytes(of: &raw) { Array($0) })?.description
                }
            } else if current.pointee.ai_family == AF_INET6, family == .aaaa {
                text = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin6_addr
                    return IPAddress(family: .aaaa, bytes: withUnsafeBytes(of: &raw) { Array($0) })?.description
                }
            }
            if let text, !output.contains(text) { output.append(text) }
        }
        return output
    }

    /// Waits for socket activity, a wake-up or the next timeout, then lets c-ares process.
    private func pollOnce() {
        var descriptors = [pollfd(fd: shared.wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
        var sockets = [ares_socket_t](repeating: -1, count: Int(ARES_GETSOCK_MAXNUM))
        var bits: Int32 = 0
        if let channel {
            bits = ares_getsock(channel, &sockets, Int32(ARES_GETSOCK_MAXNUM))
            for index in 0..<Int32(ARES_GETSOCK_MAXNUM) {
                var events: Int16 = 0
                if chttpdns_ares_sock_readable(bits, index) != 0 { events |= Int16(POLLIN) }
                if chttpdns_ares_sock_writable(bits, index) != 0 { events |= Int16(POLLOUT) }
                if events != 0 { descriptors.append(pollfd(fd: sockets[Int(index)], events: events, revents: 0)) }
            }
        }
        var waitMilliseconds = 1000.0
        if let nextDeadline = running.values.lazy.map(\.pending.deadline).min() {
            waitMilliseconds = min(waitMilliseconds, max(0, (nextDeadline - MonotonicTime.now()) * 1000))
        }
        if let channel, !running.isEmpty {
            var maximum = timeval(tv_sec: 1, tv_usec: 0)
            var buffer = timeval()
            if let next = ares_timeout(channel, &maximum, &buffer) {
                waitMilliseconds = min(waitMilliseconds, Double(next.pointee.tv_sec) * 1000 + Double(next.pointee.tv_usec) / 1000)
            }
        }
        var ready: Int32 = 0
        do throws(LoopCall.Failure) {
            ready = try LoopCall.system("poll (c-ares)") {
                poll(&descriptors, nfds_t(descriptors.count), Int32(waitMilliseconds.rounded(.up)))
            }
        } catch {
            // Only bad arguments fail here (EFAULT, EINVAL, ENOMEM): report it; deadlines still expire.
            LoopCall.report(error)
        }
        if ready > 0, descriptors[0].revents != 0 {
            shared.wake.drain()
        }
        guard let channel else { return }
        var processed = false
        for descriptor in descriptors.dropFirst() where descriptor.revents != 0 {
            let readable = descriptor.revents & Int16(POLLIN | POLLERR | POLLHUP) != 0
            let writable = descriptor.revents & Int16(POLLOUT) != 0
            ares_process_fd(channel, readable ? descriptor.fd : ARES_SOCKET_BAD, writable ? descriptor.fd : ARES_SOCKET_BAD)
            processed = true
        }
        if !processed {
            ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD)  // timeouts and retries
        }
    }

    /// Completes lookups whose deadline passed with `.timeout` (c-ares may still finish them
    /// later; that result is dropped).
    private func expireDeadlines() {
        guard !running.isEmpty else { return }
        let now = MonotonicTime.now()
        for (key, lookup) in running where lookup.pending.deadline <= now {
            running.removeValue(forKey: key)
            let milliseconds = lookup.pending.timeoutMilliseconds
            lookup.fail(UpstreamError(.timeout, "system resolver: no answer within \(milliseconds) ms"))
        }
    }
}

@available(*, unavailable)
extension AresLoopWorker: Sendable {}

import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The prober thread's side of ``SocketSpeedTester``: turns queued requests into probes, keeps at
/// most `maxConcurrentProbes` sockets open, waits on all of them with one `poll(2)`, enforces each
/// probe's deadline, and calls each request's completion once all its addresses are decided.
final class SpeedProbeWorker {
    struct Configuration: Sendable {
        var maxConcurrentProbes: Int
        /// Whether unprivileged ICMP echo sockets can be opened, per family (checked once).
        var icmpV4: Bool
        var icmpV6: Bool
    }

    /// One request: its results so far and how many addresses are still open.
    final class Batch {
        let completion: @Sendable ([String: ProbeResult]) -> Void
        var results: [String: ProbeResult] = [:]
        var remaining: Int

        init(remaining: Int, completion: @escaping @Sendable ([String: ProbeResult]) -> Void) {
            self.remaining = remaining
            self.completion = completion
        }
    }

    /// An address waiting for a free probe slot.
    struct Waiting {
        var address: String
        var port: Int
        var timeout: Double
        var batch: Batch
    }

    /// A probe with an open socket.
    struct Running {
        var socket: ProbeSocket
        var address: String
        var batch: Batch
    }

    private let shared: SpeedProbeShared
    private let configuration: Configuration
    private var waiting: [Waiting] = []
    private var waitingStart = 0
    private var running: [Running] = []
    private var sequence: UInt16 = 0

    init(shared: SpeedProbeShared, configuration: Configuration) {
        self.shared = shared
        self.configuration = configuration
    }

    func run() {
        while true {
            let (requests, stop) = shared.take()
            if stop {
                tearDown(failing: requests)
                return
            }
            for request in requests { accept(request) }
            startWaiting()
            pollOnce()
            expireDeadlines()
        }
    }

    /// Queues every distinct address of `request`; completes an empty one at once.
    private func accept(_ request: PendingSpeedProbe) {
        var seen = Set<String>()
        let addresses = request.addresses.filter { seen.insert($0).inserted }
        guard !addresses.isEmpty else {
            request.completion([:])
            return
        }
        let batch = Batch(remaining: addresses.count, completion: request.completion)
        for address in addresses {
            waiting.append(Waiting(address: address, port: request.port, timeout: request.timeout, batch: batch))
        }
    }

    /// Opens probes for waiting addresses while slots are free.
    private func startWaiting() {
        while running.count < configuration.maxConcurrentProbes, waitingStart < waiting.count {
            let next = waiting[waitingStart]
            waitingStart += 1
            switch start(next) {
            case .inFlight(let socket):
                running.append(Running(socket: socket, address: next.address, batch: next.batch))
            case .finished(let result):
                finish(next.address, of: next.batch, with: result)
            }
        }
        if waitingStart == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingStart = 0
        }
    }

    /// Port 0 is an ICMP echo where the family allows it, else TCP 443; other ports are TCP.
    private func start(_ probe: Waiting) -> ProbeSocket.Start {
        guard (0...65_535).contains(probe.port) else { return .finished(.unreachable) }
        let icmp = probe.port == 0
        guard let address = SocketAddress(probe.address, port: icmp ? 0 : UInt16(probe.port)) else {
            return .finished(.unreachable)
        }
        if icmp {
            let allowed = address.family == AF_INET6 ? configuration.icmpV6 : configuration.icmpV4
            if allowed {
                sequence &+= 1
                return ProbeSocket.echo(to: address, sequence: sequence, timeout: probe.timeout)
            }
            guard let fallback = SocketAddress(probe.address, port: SocketSpeedTester.icmpFallbackPort) else {
                return .finished(.unreachable)
            }
            return ProbeSocket.connect(to: fallback, timeout: probe.timeout)
        }
        return ProbeSocket.connect(to: address, timeout: probe.timeout)
    }

    /// Records one address's result and completes its request when it was the last one.
    private func finish(_ address: String, of batch: Batch, with result: ProbeResult) {
        batch.results[address] = result
        batch.remaining -= 1
        if batch.remaining == 0 {
            batch.completion(batch.results)
        }
    }

    /// Waits for socket activity, a wake-up or the nearest deadline, then settles ready probes.
    private func pollOnce() {
        var descriptors = [pollfd(fd: shared.wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
        descriptors.reserveCapacity(running.count + 1)
        for probe in running {
            descriptors.append(pollfd(fd: probe.socket.descriptor, events: probe.socket.events, revents: 0))
        }
        var waitMilliseconds: Int32 = -1
        if let nearest = running.lazy.map(\.socket.deadline).min() {
            let milliseconds = max(0, (nearest - MonotonicTime.now()) * 1000).rounded(.up)
            waitMilliseconds = Int32(min(milliseconds, 60_000))
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
        let now = MonotonicTime.now()
        guard ready > 0 else { return }
        if descriptors[0].revents != 0 {
            shared.wake.drain()
        }
        // `running[i]` is `descriptors[i + 1]`; settle from the back so removal keeps indices.
        for index in running.indices.reversed() {
            let revents = descriptors[index + 1].revents
            guard let result = running[index].socket.handle(revents: revents, now: now) else { continue }
            let probe = running.remove(at: index)
            probe.socket.close()
            finish(probe.address, of: probe.batch, with: result)
        }
    }

    /// Probes past their deadline are unreachable.
    private func expireDeadlines() {
        guard !running.isEmpty else { return }
        let now = MonotonicTime.now()
        for index in running.indices.reversed() where running[index].socket.deadline <= now {
            let probe = running.remove(at: index)
            probe.socket.close()
            finish(probe.address, of: probe.batch, with: .unreachable)
        }
    }

    /// Closes every socket and completes every request, counting undecided addresses unreachable.
    private func tearDown(failing requests: [PendingSpeedProbe]) {
        let leftover = shared.close()
        for probe in running {
            probe.socket.close()
            finish(probe.address, of: probe.batch, with: .unreachable)
        }
        running.removeAll()
        for probe in waiting[waitingStart...] {
            finish(probe.address, of: probe.batch, with: .unreachable)
        }
        waiting.removeAll()
        waitingStart = 0
        for request in requests + leftover {
            request.completion(SocketSpeedTester.allUnreachable(request.addresses))
        }
    }
}

@available(*, unavailable)
extension SpeedProbeWorker: Sendable {}

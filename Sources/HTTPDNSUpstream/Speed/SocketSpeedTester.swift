import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The speed test over real sockets: a TCP connect to the given port, or an ICMP echo for port 0.
///
/// One prober thread owns every probe socket (non-blocking, waited on with one `poll(2)`), so a
/// call probes all its addresses in parallel without a thread per probe, and ``probe(_:port:timeout:completion:)``
/// returns at once from any thread. A probe's RTT runs from `connect(2)` (or the echo request) to
/// the socket turning writable with `SO_ERROR` 0 (or the echo reply); refused, unreachable and
/// timed-out probes are `.unreachable`. Completions run on the prober thread and must return
/// quickly (record the results, hand off anything slow). At most `maxConcurrentProbes` sockets are
/// open at once; further addresses wait for a slot, and their timeout starts when they are sent.
///
/// Port 0 uses an unprivileged ICMP socket (`socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)`, ICMPv6
/// likewise), which the kernel allows only to groups within `net.ipv4.ping_group_range`; whether
/// it does is checked once, when the tester is created, and where it does not, port 0 is a TCP
/// connect to 443 instead.
public final class SocketSpeedTester: SpeedTester {
    /// Probes running at once unless told otherwise.
    public static let defaultMaxConcurrentProbes = 256
    /// The TCP port that stands in for ICMP echo where unprivileged ICMP sockets are not allowed.
    public static let icmpFallbackPort: UInt16 = 443
    /// The longest timeout honoured, in seconds; longer ones are cut to it.
    public static let maximumTimeout: Double = 60

    /// True when port 0 probes of IPv4 addresses use ICMP echo (else TCP 443).
    public let usesICMPForIPv4: Bool
    /// True when port 0 probes of IPv6 addresses use ICMPv6 echo (else TCP 443).
    public let usesICMPForIPv6: Bool

    private let shared: SpeedProbeShared

    /// Starts the prober thread.
    /// - Parameters:
    ///   - maxConcurrentProbes: sockets open at once at most (at least 1).
    ///   - allowICMP: false makes port 0 always a TCP connect to 443, even where the kernel would
    ///     allow ICMP sockets.
    public init(maxConcurrentProbes: Int = SocketSpeedTester.defaultMaxConcurrentProbes, allowICMP: Bool = true) {
        usesICMPForIPv4 = allowICMP && Self.unprivilegedICMPAllowed(ipv6: false)
        usesICMPForIPv6 = allowICMP && Self.unprivilegedICMPAllowed(ipv6: true)
        let shared = SpeedProbeShared(services: .service)
        self.shared = shared
        let configuration = SpeedProbeWorker.Configuration(
            maxConcurrentProbes: max(1, maxConcurrentProbes), icmpV4: usesICMPForIPv4, icmpV6: usesICMPForIPv6)
        shared.startThread(named: "httpdnsd-speed") { SpeedProbeWorker(shared: shared, configuration: configuration).run() }
    }

    deinit {
        shutdown()
    }

    /// Probes every distinct address of `addresses` (IPv4 or IPv6 literals; anything else is
    /// `.unreachable`) on `port` within `timeout` seconds each, and calls `completion` once with one
    /// result per distinct address, on the prober thread. After ``shutdown()``, `completion` is
    /// called at once on the caller's thread with every address unreachable.
    public func probe(
        _ addresses: [String], port: Int, timeout: Double,
        completion: @escaping @Sendable ([String: ProbeResult]) -> Void
    ) {
        let seconds = timeout.isNaN ? 1 : min(max(timeout, 0.001), Self.maximumTimeout)
        let request = PendingSpeedProbe(addresses: addresses, port: port, timeout: seconds, completion: completion)
        guard shared.enqueue(request) else {
            completion(Self.allUnreachable(addresses))
            return
        }
    }

    /// Stops the prober thread, completing unfinished requests with their undecided addresses
    /// unreachable, and waits for it unless called from that thread (from a completion). Idempotent.
    public func shutdown() {
        shared.stopAndWait()
    }

    /// Whether this process may open an unprivileged ICMP (or, with `ipv6`, ICMPv6) echo socket;
    /// opens one and closes it again.
    public static func unprivilegedICMPAllowed(ipv6: Bool) -> Bool {
        guard let descriptor = ProbeSocket.openICMPSocket(family: ipv6 ? AF_INET6 : AF_INET) else { return false }
        close(descriptor)
        return true
    }

    /// Every distinct address of `addresses` as unreachable.
    static func allUnreachable(_ addresses: [String]) -> [String: ProbeResult] {
        Dictionary(addresses.map { ($0, ProbeResult.unreachable) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A request waiting for the prober thread.
struct PendingSpeedProbe: Sendable {
    var addresses: [String]
    var port: Int
    /// Seconds, already clamped.
    var timeout: Double
    var completion: @Sendable ([String: ProbeResult]) -> Void
}

/// The prober thread's queue.
typealias SpeedProbeShared = LoopQueue<PendingSpeedProbe>

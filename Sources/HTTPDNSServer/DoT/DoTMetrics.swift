import HTTPDNSCore
import Synchronization

/// Counters of the DoT listener's connections for `/metrics`. Its queries count with plain
/// DNS's (`PlainDNSMetrics`, label `protocol="dot"`).
public final class DoTMetrics: Sendable {
    let handshakes = StripedCounter()
    let handshakeFailures = StripedCounter()
    let connectionsOpen = Atomic<Int>(0)
    /// By `ConnectionRefusal`.
    let refused = [StripedCounter(), StripedCounter()]
    let shed = StripedCounter()
    /// By `DoTTimeouts.Cut`.
    let cut = [StripedCounter(), StripedCounter()]

    public init() {}

    enum ConnectionRefusal: String, CaseIterable {
        case limit, perAddress = "per_address"
    }

    static func index(_ refusal: ConnectionRefusal) -> Int { refusal == .limit ? 0 : 1 }
    static func index(_ cut: DoTTimeouts.Cut) -> Int { cut == .idle ? 0 : 1 }

    static let handshakesFamily = MetricDescriptor(
        "httpdns_dot_handshakes_total", .counter, help: "DoT connections whose TLS handshake completed.")
    static let handshakeFailuresFamily = MetricDescriptor(
        "httpdns_dot_handshake_failures_total", .counter,
        help: "DoT connections whose TLS handshake failed (no common protocol version or cipher, not TLS, closed early).")
    static let connectionsOpenFamily = MetricDescriptor("httpdns_dot_connections_open", .gauge, help: "Open DoT connections.")
    static let refusedFamily = MetricDescriptor(
        "httpdns_dot_connections_refused_total", .counter,
        help: "DoT connections closed at once: connectionLimit open (limit), or perIPConnectionLimit from the client (per_address).",
        labels: ["reason"])
    static let shedFamily = MetricDescriptor(
        "httpdns_dot_connections_shed_total", .counter,
        help: "DoT connections closed at connectionLimit to let in a client holding fewer.")
    static let cutFamily = MetricDescriptor(
        "httpdns_dot_connections_closed_total", .counter,
        help:
            "DoT connections closed by the listener: quiet for connectionTimeout (idle), or too slow to send a query or read the answers (slow).",
        labels: ["reason"])

    public func emit(into out: inout MetricsEmitter) {
        out.sample(Self.handshakesFamily, [], handshakes.value)
        out.sample(Self.handshakeFailuresFamily, [], handshakeFailures.value)
        out.sample(Self.connectionsOpenFamily, [], UInt64(max(0, connectionsOpen.load(ordering: .relaxed))))
        for refusal in ConnectionRefusal.allCases {
            out.sample(Self.refusedFamily, [refusal.rawValue], refused[Self.index(refusal)].value)
        }
        out.sample(Self.shedFamily, [], shed.value)
        for reason in DoTTimeouts.Cut.allCases {
            out.sample(Self.cutFamily, [reason.rawValue], cut[Self.index(reason)].value)
        }
    }
}

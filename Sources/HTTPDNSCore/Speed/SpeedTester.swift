/// How a speed probe of one address ended.
public enum ProbeResult: Sendable, Equatable {
    /// Connected (TCP) or echoed (ICMP) after this many seconds.
    case reachable(seconds: Double)
    /// Refused, unreachable, or no reply within the timeout.
    case unreachable
}

/// Measures how fast the addresses of an answer can be reached (the SDK's "IP speed test").
/// Implementations never block the caller: `probe` returns at once, probes every address in
/// parallel with a hard timeout each, and calls `completion` exactly once, on a thread of their
/// choosing, with one result per distinct address.
public protocol SpeedTester: Sendable {
    /// `port` 0 asks for ICMP echo where the kernel allows unprivileged ICMP sockets, else a TCP
    /// connect to 443; any other port is a TCP connect to it.
    func probe(
        _ addresses: [String], port: Int, timeout: Double,
        completion: @escaping @Sendable ([String: ProbeResult]) -> Void)
}

import Foundation

/// Limits how many loopback server stacks (unbound + dnss + responder + httpdnsd) run at once,
/// so the integration tests do not starve the timing-sensitive unit tests that run beside
/// them on a small machine. Waiting is a suspension, never a blocked thread.
///
/// The limit is `HTTPDNS_IT_PARALLEL` (default 3). Never nest `withTestServers` calls: an inner
/// one could wait forever for a permit its outer call holds.
public actor ServerStackGate {
    /// The gate `withTestServers` uses.
    public static let shared = ServerStackGate(
        permits: Int(ProcessInfo.processInfo.environment["HTTPDNS_IT_PARALLEL"] ?? "") ?? 3)

    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init(permits: Int) {
        available = max(1, permits)
    }

    /// Waits for a permit (first come, first served).
    public func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Returns a permit, handing it straight to the oldest waiter if there is one.
    public func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}

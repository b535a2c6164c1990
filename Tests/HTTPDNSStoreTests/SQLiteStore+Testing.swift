import HTTPDNSCore
import HTTPDNSStore

extension SQLiteStore {
    /// Waits until everything queued so far is committed.
    func flushed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            flush { continuation.resume() }
        }
    }
}

/// Builds test keys and entries.
enum Sample {
    static func key(_ host: String, _ family: RecordFamily = .a, network: String = "") -> CacheKey {
        CacheKey(host: HostName(host)!, family: family, network: network)
    }

    static func entry(
        _ addresses: [String], ttl: UInt32 = 300, storedAt: Double = 1_000_000, nxdomain: Bool = false,
        origin: AnswerSource = .upstream
    ) -> CacheEntry {
        CacheEntry(addresses: addresses, originTTL: ttl, storedAt: storedAt, nxdomain: nxdomain, origin: origin)
    }
}

import HTTPDNSCore
import HTTPDNSStore

extension SQLiteStore {
    /// Tries to commit everything queued so far; says whether it is durable.
    @discardableResult
    func flushed() async -> FlushOutcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<FlushOutcome, Never>) in
            flush { continuation.resume(returning: $0) }
        }
    }

    /// `saveAccount`, waiting for its completion.
    func saveAccount(id: String, json: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            saveAccount(id: id, json: json) { continuation.resume(with: $0) }
        }
    }

    /// `deleteAccount`, waiting for its completion.
    func deleteAccount(id: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            deleteAccount(id: id) { continuation.resume(with: $0) }
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
        origin: AnswerSource = .upstream, soa: NegativeAnswerSOA? = nil
    ) -> CacheEntry {
        CacheEntry(addresses: addresses, originTTL: ttl, storedAt: storedAt, nxdomain: nxdomain, origin: origin, soa: soa)
    }

    /// The SOA of a negative answer from `zone`.
    static func soa(_ zone: String = "example.") -> NegativeAnswerSOA {
        NegativeAnswerSOA(
            zone: zone, primary: "ns.\(zone)", mailbox: "hostmaster.\(zone)", serial: 7, refresh: 3600, retry: 600, expire: 86400,
            minimum: 45)!
    }
}

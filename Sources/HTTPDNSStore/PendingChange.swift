import HTTPDNSCore

/// One queued change to a cached answer: write it, or delete it.
enum PendingChange: Sendable, Hashable {
    case upsert(CacheEntry)
    case remove
}

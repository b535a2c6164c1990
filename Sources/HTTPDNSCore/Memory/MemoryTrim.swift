internal import CMalloc
import Foundation
import Synchronization

/// Hands freed heap memory back to the kernel after bulk work. A preload of 10 000 hosts or the
/// warm load of a million entries allocates request bodies, outcomes and row arrays that are
/// freed at once, but glibc keeps the pages: at 100 000 entries that retained memory is about
/// 190 bytes per cached entry. One trim runs at a time; a request that arrives
/// during a trim makes it run once more when it ends (the memory that request freed may come
/// after the running trim passed it), so the last of several concurrent preloads is not skipped.
public enum MemoryTrim {
    private static let coalescer = TrimCoalescer()

    /// Caps glibc's malloc arenas (`mallopt(M_ARENA_MAX, n)`) at one per HTTP worker thread (at
    /// least 2), unless the operator set `MALLOC_ARENA_MAX`. glibc's default is eight per core;
    /// each thread that allocates may get its own arena, and long-lived cache entries end up
    /// scattered over all of them between freed request buffers. With a preload of 100 000 names
    /// that is 84 MB RSS with the default and 70 MB with 2 arenas, for the same 34.5 MB in use,
    /// and the same hit throughput (small blocks come from glibc's per-thread cache, not the
    /// arena). Call it before the worker threads start.
    @discardableResult
    public static func limitArenas(httpThreads: Int) -> ArenaLimit {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return .chosenByEnvironment }
        let count = max(2, httpThreads)
        return mallopt(M_ARENA_MAX, Int32(count)) == 1 ? .applied(count) : .refused(count)
    }

    /// What `limitArenas` did.
    public enum ArenaLimit: Equatable, Sendable {
        /// At most this many arenas.
        case applied(Int)
        /// `MALLOC_ARENA_MAX` is set: glibc reads it, nothing was changed.
        case chosenByEnvironment
        /// `mallopt(M_ARENA_MAX, n)` said no: the allocator is not glibc's (AddressSanitizer's
        /// answers 0 to every `mallopt`), so nothing is capped.
        case refused(Int)
    }

    /// Trims the heap now (glibc `malloc_trim(0)`), or has the trim already running trim once
    /// more when it ends.
    public static func afterBulkWork() {
        coalescer.run { _ = malloc_trim(0) }
    }
}

extension MemoryTrim {
    /// `afterBulkWork` on a background queue, for a caller on an HTTP thread (a trim of a large
    /// heap walks all of it): after a flush of the cache or a large eviction.
    public static func inBackground() {
        DispatchQueue.global(qos: .utility).async { afterBulkWork() }
    }
}

/// Runs one trim at a time; requests made while one runs are served by one more pass after it.
final class TrimCoalescer: Sendable {
    /// Trims asked for and not yet served; the caller that takes it from 0 does the trimming.
    private let requests = Atomic<Int>(0)

    func run(_ trim: () -> Void) {
        guard requests.add(1, ordering: .acquiringAndReleasing).oldValue == 0 else { return }
        var pending = 1
        while pending > 0 {
            trim()
            // Requests that came during this pass (beyond the one it served) earn one more.
            let left = requests.subtract(pending, ordering: .acquiringAndReleasing).newValue
            pending = left > 0 ? left : 0
        }
    }
}

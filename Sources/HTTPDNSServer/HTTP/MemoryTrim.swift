import CMicroHTTPD
import Synchronization

/// Hands freed heap memory back to the kernel after bulk work. A preload of 10 000 hosts or the
/// warm load of a million entries allocates request bodies, outcomes and row arrays that are
/// freed at once, but glibc keeps the pages: the benchmark saw about 190 bytes per cached entry
/// of such retained memory at 100 000 entries. At most one trim runs at a time; others are skipped.
public enum MemoryTrim {
    private static let running = Atomic<Bool>(false)

    /// Trims the heap now, unless a trim is already running.
    public static func afterBulkWork() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        _ = chttpdns_malloc_trim()
        running.store(false, ordering: .releasing)
    }
}

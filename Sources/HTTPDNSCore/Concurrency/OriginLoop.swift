/// The event loop of a thread that serves requests (an HTTP thread), for work that should come
/// back to it. The engine continues a miss there after another thread (the Redis tier's) answered
/// the shared-tier lookup, so that the upstream request the continuation makes goes out on that
/// thread's own connections and its answer is written by the thread that holds the request,
/// rather than through two more threads.
public final class OriginLoop: Sendable {
    private let submit: @Sendable (@escaping @Sendable () -> Void) -> Bool

    /// `submit` queues a job for the loop's thread, to run at its next turn; false when the loop
    /// no longer takes work (it is stopping).
    public init(submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Bool) {
        self.submit = submit
    }

    /// Runs `job` on the loop's thread, or at once on the calling one when the loop no longer
    /// takes work.
    public func run(_ job: @escaping @Sendable () -> Void) {
        if !submit(job) { job() }
    }

    /// The calling thread's loop, if it registered one.
    public static var current: OriginLoop? { slot.current }

    /// Registers `loop` as the calling thread's (nil: none). The caller keeps it alive while it
    /// is registered.
    public static func setCurrent(_ loop: OriginLoop?) { slot.set(loop) }

    private static let slot = ThreadSlot<OriginLoop>()
}

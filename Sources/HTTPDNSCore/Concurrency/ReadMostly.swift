import Synchronization

/// A value read on every request and replaced rarely (an account's settings, the table of
/// accounts). Reading is one acquiring load, with no lock that the HTTP threads would contend
/// for; replacing takes a lock and publishes a new immutable box.
///
/// Reclamation: a reader turns the loaded pointer into a strong reference in the next few
/// instructions, so a replaced box is only released once it has been retired for
/// `gracePeriod` (60 s), at a later replacement, the way RCU waits for a grace period. Until
/// then the old value (and what it references) stays in memory.
public final class ReadMostly<Value: Sendable>: @unchecked Sendable {
    private final class Box: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private struct Boxes {
        var current: Box
        var retired: [(box: Box, at: ContinuousClock.Instant)] = []
    }

    /// How long a replaced value is kept before it may be released.
    public static var gracePeriod: Duration { .seconds(60) }

    private let published: Atomic<UnsafeRawPointer>
    private let boxes: Mutex<Boxes>

    public init(_ value: Value) {
        let box = Box(value)
        boxes = Mutex(Boxes(current: box))
        published = Atomic(UnsafeRawPointer(Unmanaged.passUnretained(box).toOpaque()))
    }

    /// The current value.
    public var value: Value {
        Unmanaged<Box>.fromOpaque(published.load(ordering: .acquiring)).takeUnretainedValue().value
    }

    /// Runs `body` on the current value without retaining the box that holds it: on the request
    /// path both HTTP threads read the same box, and every retain would be an atomic write to one
    /// shared cache line. The box stays alive for the call (the grace period above).
    @inline(__always)
    public func read<R>(_ body: (Value) -> R) -> R {
        Unmanaged<Box>.fromOpaque(published.load(ordering: .acquiring))._withUnsafeGuaranteedRef { body($0.value) }
    }

    /// Replaces the value with `change(current)` and returns what `change` returned beside it.
    /// Writers are serialised; readers see the old or the new value, never a torn one.
    @discardableResult
    public func update<R>(_ change: (Value) -> (Value, R)) -> R {
        boxes.withLock { boxes in
            let (value, result) = change(boxes.current.value)
            let box = Box(value)
            let now = ContinuousClock.now
            boxes.retired.removeAll { $0.at.duration(to: now) > Self.gracePeriod }
            boxes.retired.append((boxes.current, now))
            boxes.current = box
            published.store(UnsafeRawPointer(Unmanaged.passUnretained(box).toOpaque()), ordering: .releasing)
            return result
        }
    }

    /// Replaced values still kept (within their grace period).
    public var retiredCount: Int { boxes.withLock { $0.retired.count } }

    /// `size` summed over the replaced values still kept: what the grace period costs.
    public func retiredSize(_ size: (Value) -> Int) -> Int {
        boxes.withLock { $0.retired.reduce(0) { $0 + size($1.box.value) } }
    }

    /// Releases the replaced values whose grace period is over, as the next `update` would.
    public func reclaim() {
        let now = ContinuousClock.now
        boxes.withLock { $0.retired.removeAll { $0.at.duration(to: now) > Self.gracePeriod } }
    }
}

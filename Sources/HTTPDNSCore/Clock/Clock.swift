/// Wall-clock time in seconds since 1970 (fractional). Wall time rather than a monotonic clock
/// because cache expiries are persisted and compared again after a restart.
public typealias Timestamp = Double

/// The source of time for the engine; injected so TTL logic is tested without sleeping.
public protocol Clock: Sendable {
    func now() -> Timestamp
}

/// The real clock.
public struct SystemClock: Clock {
    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Wall-clock time in seconds since 1970 (fractional). Wall time rather than a monotonic clock
/// because cache expiries are persisted and compared again after a restart.
public typealias Timestamp = Double

/// The source of wall-clock time for the engine, limits and signatures; injected so TTL logic is
/// tested without sleeping. Not a `Swift.Clock`: it reads the calendar time as a `Timestamp` and has
/// no instants or sleeping.
public protocol WallClock: Sendable {
    func now() -> Timestamp
}

/// The real clock.
public struct SystemClock: WallClock {
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

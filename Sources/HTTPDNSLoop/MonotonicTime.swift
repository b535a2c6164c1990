#if canImport(Glibc)
    import Glibc
#endif

/// Seconds on CLOCK_MONOTONIC, for deadlines that must not jump with the wall clock.
package enum MonotonicTime {
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }

    /// How long a loop may wait in `epoll_wait` from `now` until the earlier of two deadlines
    /// (monotonic milliseconds, nil: none): at most a second, so that a loop looks round at
    /// least that often.
    package static func waitMilliseconds(until first: Int64?, _ second: Int64?, now: Int64) -> Int32 {
        let deadline: Int64
        switch (first, second) {
        case (let first?, let second?): deadline = min(first, second)
        case (let first?, nil): deadline = first
        case (nil, let second?): deadline = second
        case (nil, nil): return 1000
        }
        return Int32(clamping: min(1000, max(0, deadline - now)))
    }

    /// Whole milliseconds on CLOCK_MONOTONIC: the unit of the loops' deadlines.
    package static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

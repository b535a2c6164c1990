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

    /// Whole milliseconds on CLOCK_MONOTONIC: the unit of the loops' deadlines.
    package static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

#if HTTPDNS_TSAN
    import Synchronization

    // ThreadSanitizer builds only (`make tsan` passes `-DHTTPDNS_TSAN`; docs/sanitizers.md): every
    // other build compiles nothing from this file and calls the standard library's `withLock`.
    //
    // `Mutex` on Linux is a futex driven by system calls, which TSan does not intercept, so it sees
    // no happens-before edge between one holder's writes and the next holder's reads and reports
    // correct code as racing. This `withLock` tells TSan about the lock's edges: it acquires the
    // mutex's address once the lock is held, before `body` touches the value, and releases it
    // before the lock is let go.
    //
    // Being declared on `Mutex` where `Value` is copyable (every mutex of httpdnsd), it is more
    // specific than the standard library's (declared for `Value: ~Copyable`), so every
    // `mutex.withLock { ... }` in a module that imports this one calls it, with no change at the
    // call sites: HTTPDNSCore re-exports it to every module that imports HTTPDNSCore, and
    // HTTPDNSLoop, below HTTPDNSCore, imports it itself. `standardWithLock` reaches the standard
    // library's from a generic context where this one does not apply.

    @_silgen_name("__tsan_acquire") @usableFromInline func tsanAcquire(_ address: UnsafeRawPointer)
    @_silgen_name("__tsan_release") @usableFromInline func tsanRelease(_ address: UnsafeRawPointer)

    extension Mutex {
        /// `Mutex.withLock` with the lock's happens-before edges told to ThreadSanitizer
        /// (`__tsan_acquire` / `__tsan_release` on the mutex's address).
        @inlinable @inline(__always)
        public borrowing func withLock<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            // The address of the mutex itself (a class's stored property or a global: it does not
            // move), read before the lock; the value is not touched before the acquire.
            let token = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
            return try standardWithLock(self) { (value: inout sending Value) throws(E) -> sending Result in
                tsanAcquire(token)
                defer { tsanRelease(token) }
                return try body(&value)
            }
        }
    }

    /// The standard library's `Mutex.withLock`: for a `Value` not known to be copyable, the
    /// annotated one above does not apply.
    @inlinable @inline(__always)
    func standardWithLock<Value: ~Copyable, Result: ~Copyable, E: Error>(
        _ mutex: borrowing Mutex<Value>, _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
#endif

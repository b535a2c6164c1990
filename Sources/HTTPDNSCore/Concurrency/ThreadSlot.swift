#if canImport(Glibc)
    import Glibc
#endif

/// One object per thread, unretained (a pthread key): how a loop thread makes itself known to
/// code it calls, such as `OriginLoop.current` and the upstream client an HTTP thread carries.
/// The key is created once and never deleted; whoever registers an object keeps it alive while
/// it is registered.
public struct ThreadSlot<Object: AnyObject>: Sendable {
    private let key: pthread_key_t

    public init() {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        self.key = key
    }

    /// The calling thread's object, if one is registered.
    public var current: Object? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Registers `object` as the calling thread's (nil: none).
    public func set(_ object: Object?) {
        let result = pthread_setspecific(key, object.map { Unmanaged.passUnretained($0).toOpaque() })
        precondition(result == 0, "pthread_setspecific failed: \(result)")
    }
}

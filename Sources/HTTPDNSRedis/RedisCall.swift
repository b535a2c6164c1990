import CHiredis

/// The one place hiredis results are checked: a `REDIS_ERR` from an async call, a context that
/// came back with `err` set, becomes a `RedisError` naming the call and hiredis' `errstr`.
enum RedisCall {
    /// Checks the result of `redisAsyncFormattedCommand` and friends (`REDIS_OK` or `REDIS_ERR`).
    /// `call` names the call in the error; it is built only on a failure (this runs per command).
    static func check(
        _ result: Int32, _ call: @autoclosure () -> String, context: UnsafeMutablePointer<redisAsyncContext>?
    ) throws(RedisError) {
        guard result != REDIS_OK else { return }
        throw RedisError(.client, "\(call()) failed: \(contextError(context) ?? "REDIS_ERR")")
    }

    /// Checks a context `redisAsyncConnect` returned: nil (out of memory) or `err` set.
    static func checkConnect(_ context: UnsafeMutablePointer<redisAsyncContext>?, target: String) throws(RedisError)
        -> UnsafeMutablePointer<redisAsyncContext>
    {
        guard let context else { throw RedisError(.unavailable, "redisAsyncConnect(\(target)) failed: out of memory") }
        if let error = contextError(context) {
            redisAsyncFree(context)
            throw RedisError(.unavailable, "redisAsyncConnect(\(target)) failed: \(error)")
        }
        return context
    }

    /// The context's error (`err` and `errstr`), nil when it has none.
    static func contextError(_ context: UnsafeMutablePointer<redisAsyncContext>?) -> String? {
        guard let context, context.pointee.err != 0 else { return nil }
        let text = context.pointee.errstr.map { String(cString: $0) } ?? ""
        return "\(text.isEmpty ? "error" : text) (hiredis err \(context.pointee.err))"
    }
}

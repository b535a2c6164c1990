import CHiredis

/// hiredis' side of the worker: the `ev` hooks that say which socket events it wants (applied to
/// the epoll set before the loop next waits), the reply callbacks, and the binary-safe command
/// call. hiredis calls them on the loop thread, from inside its own calls (`redisAsyncHandleRead`,
/// `redisAsyncFree`, ...).
extension RedisLoopWorker {
    private static func worker(_ data: UnsafeMutableRawPointer?) -> RedisLoopWorker? {
        data.map { Unmanaged<RedisLoopWorker>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func worker(of context: UnsafeMutablePointer<redisAsyncContext>?) -> RedisLoopWorker? {
        worker(context?.pointee.ev.data)
    }

    static let addRead: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let worker = worker(data) else { return }
        worker.wantRead = true
    }

    static let delRead: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let worker = worker(data) else { return }
        worker.wantRead = false
    }

    static let addWrite: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let worker = worker(data) else { return }
        worker.wantWrite = true
    }

    static let delWrite: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        guard let worker = worker(data) else { return }
        worker.wantWrite = false
    }

    static let cleanup: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        worker(data)?.contextGone()
    }

    /// A failed connect is followed by the context's free (and `cleanup`); nothing to do here.
    static let connected: @convention(c) (UnsafePointer<redisAsyncContext>?, Int32) -> Void = { _, _ in }

    static let commandReply:
        @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            context, reply, privateData in
            guard let privateData else { return }
            let pending = Unmanaged<PendingCommand>.fromOpaque(privateData).takeRetainedValue()
            let copied = reply.map { RedisReply($0.assumingMemoryBound(to: redisReply.self)) }
            guard let worker = worker(of: context) else {
                pending.complete(.failure(RedisError(.connectionLost, "the Redis connection closed before the reply")))
                return
            }
            worker.replied(pending, copied)
        }

    static let handshakeReply:
        @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            context, reply, _ in
            guard let reply, let worker = worker(of: context) else { return }
            worker.handshakeReplied(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
        }

    static let subscriptionReply:
        @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            context, reply, _ in
            guard let reply, let worker = worker(of: context) else { return }
            worker.message(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
        }

    /// `redisAsyncFormattedCommand` of a command in RESP (``RESPCommand``; hiredis copies it
    /// before returning).
    static func issue(
        _ context: UnsafeMutablePointer<redisAsyncContext>, _ wire: [UInt8],
        callback: @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void,
        privateData: UnsafeMutableRawPointer?
    ) throws(RedisError) {
        let result = wire.withUnsafeBytes { bytes in
            redisAsyncFormattedCommand(context, callback, privateData, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        try RedisCall.check(result, "redisAsyncFormattedCommand(\(RESPCommand.name(of: wire)))", context: context)
    }
}

extension RedisConnection {
    /// Runs `script` with `keys` and `arguments`: `EVALSHA <sha1> <number of keys> <keys...>
    /// <arguments...>`. When Redis answers `NOSCRIPT` (its script cache was emptied), sends the
    /// same call as `EVAL <text> ...`, which caches the script again; that second command has a
    /// timeout of its own. `completion` runs once, with the reply or error of the last command
    /// sent, on the loop thread.
    public func evaluate(
        _ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]],
        completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void
    ) {
        // Encoded once; the completion keeps that and the script's text, from which the `EVAL`
        // form is made only when Redis asks for it.
        let call = RESPCommand.evalSHA(script.sha1Bytes, keys: keys, arguments: arguments)
        let text = script.textBytes
        let sha1Count = script.sha1Bytes.count
        send(call) { [self] result in
            guard case .failure(let error) = result, error.code == .server, error.message.hasPrefix("NOSCRIPT") else {
                completion(result)
                return
            }
            send(RESPCommand.eval(text, fromEvalSHA: call, sha1Count: sha1Count), completion: completion)
        }
    }
}

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
        var built: [[UInt8]] = []
        built.reserveCapacity(3 + keys.count + arguments.count)
        built.append(Self.evalSHA)
        built.append(script.sha1Bytes)
        built.append(keys.count < Self.keyCounts.count ? Self.keyCounts[keys.count] : Array(String(keys.count).utf8))
        built += keys
        built += arguments
        let call = built
        command(call) { [self] result in
            guard case .failure(let error) = result, error.code == .server, error.message.hasPrefix("NOSCRIPT") else {
                completion(result)
                return
            }
            var load = call
            load[0] = Self.eval
            load[1] = script.textBytes
            command(load, completion: completion)
        }
    }

    /// The command names and the usual key counts as the bytes they are sent as, made once
    /// rather than for every call.
    private static let evalSHA = Array("EVALSHA".utf8)
    private static let eval = Array("EVAL".utf8)
    private static let keyCounts = (0..<4).map { Array(String($0).utf8) }
}

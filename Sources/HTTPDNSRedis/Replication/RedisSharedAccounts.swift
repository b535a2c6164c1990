import Dispatch
import HTTPDNSCore
import Synchronization

/// Account replication and cache invalidation over Redis (docs/redis.md): the
/// `SharedAccountStore` an `AccountReplicator` writes to, and the subscription that feeds it.
///
/// Keys and channels (under the prefix; docs/redis.md):
/// - `<prefix>accounts`: a hash, account id → `AccountRecord` text (secrets included);
/// - `<prefix>accounts:version`: the counter versions come from;
/// - channel `<prefix>channel:accounts`: each record stored, as stored;
/// - channel `<prefix>channel:invalidate`: `CacheInvalidation`s, published after the shared
///   answers an eviction makes wrong are deleted (`<prefix>answer:<account>:…`).
///
/// Writes and offers are Lua scripts, so storing a record, bumping the counter and publishing
/// happen atomically. Its own two connections: `accounts` (commands, with a timeout of at least
/// 2 s: an admin change may wait that long, a request never does) and `replication` (the
/// subscriber). After each (re)subscription and every `reconcileInterval` seconds the
/// replicator reconciles with the hash.
public final class RedisSharedAccounts: SharedAccountStore, Sendable {
    /// ARGV[5] is the write's deadline, Unix milliseconds: past it, by Redis's clock, the write
    /// is refused (`LATE`), so a write whose caller gave up on it (and answered "nothing was
    /// changed") cannot take effect later, when a paused or slow Redis gets to it. ARGV[6], when
    /// given and not empty, is the version the account must be held at (0: no record), else the write is
    /// refused (`STALE`): a conditional write, checked and made in one step.
    public static let writeScript = """
        if redis.replicate_commands then redis.replicate_commands() end
        local now = redis.call('TIME')
        if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > tonumber(ARGV[5]) then
          return redis.error_reply('LATE the account write reached Redis after its deadline')
        end
        local floor = tonumber(ARGV[3])
        local current = redis.call('HGET', KEYS[1], ARGV[1])
        local held = 0
        if current then held = tonumber(string.match(current, '^{"version":(%d+),')) or 0 end
        if ARGV[6] and ARGV[6] ~= '' and held ~= tonumber(ARGV[6]) then
          return redis.error_reply('STALE the account is at version ' .. held .. ', not ' .. ARGV[6])
        end
        local v = redis.call('INCR', KEYS[2])
        if held > floor then floor = held end
        if v <= floor then
          v = floor + 1
          redis.call('SET', KEYS[2], v)
        end
        local record = '{"version":' .. v .. ',' .. ARGV[2]
        redis.call('HSET', KEYS[1], ARGV[1], record)
        redis.call('PUBLISH', ARGV[4], record)
        return record
        """

    public static let offerScript = """
        local v = tonumber(ARGV[2])
        local current = redis.call('HGET', KEYS[1], ARGV[1])
        if current then
          local held = tonumber(string.match(current, '^{"version":(%d+),'))
          if v == 0 or (held and held >= v) then return current end
        end
        if v == 0 then
          v = redis.call('INCR', KEYS[2])
        else
          local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
          if counter < v then redis.call('SET', KEYS[2], v) end
        end
        local record = '{"version":' .. v .. ',' .. ARGV[3]
        redis.call('HSET', KEYS[1], ARGV[1], record)
        redis.call('PUBLISH', ARGV[4], record)
        return record
        """

    /// Deletes the shared answers a cache change makes wrong, then publishes the change, so
    /// no replica that evicts can take the old answer back from the shared tier. KEYS: exact
    /// answer keys; ARGV: channel, message, then `SCAN MATCH` patterns (per-network answers,
    /// or a whole account: a flush blocks Redis for one scan of its keys, an admin's rare act).
    public static let invalidateScript = """
        local n = 0
        for _, k in ipairs(KEYS) do n = n + redis.call('DEL', k) end
        for i = 3, #ARGV do
          local cursor = '0'
          repeat
            local page = redis.call('SCAN', cursor, 'MATCH', ARGV[i], 'COUNT', 1000)
            cursor = page[1]
            for _, k in ipairs(page[2]) do n = n + redis.call('DEL', k) end
          until cursor == '0'
        end
        redis.call('PUBLISH', ARGV[1], ARGV[2])
        return n
        """

    /// How long a signature is remembered past its expiry: replicas whose clocks differ by up
    /// to this still refuse its replay.
    static let replayMargin = 60.0

    private let keys: RedisKeys
    private let clock: any WallClock
    private let commands: RedisConnection
    /// The `commands` connection's timeout: a write's deadline is half of it after the call,
    /// so Redis refuses it before the caller gives up even when their clocks differ by as much.
    private let commandTimeoutMilliseconds: Int
    private let subscriber: RedisConnection
    private let hashKey: String
    private let counterKey: String
    private let accountsChannel: String
    private let invalidateChannel: String
    /// The periodic reconcile; nil once shut down.
    private let locked_timer: Mutex<DispatchSourceTimer?>

    /// Connects (two connections of its own, metrics in `client.metrics`), subscribes, and feeds
    /// `replicator` from then on.
    public init(client: RedisClient, replicator: AccountReplicator, clock: any WallClock = SystemClock(), reconcileInterval: Double = 15) {
        keys = client.keys
        self.clock = clock
        commandTimeoutMilliseconds = max(client.timeoutMilliseconds, 2000)
        hashKey = client.keys.key("accounts")
        counterKey = client.keys.key("accounts:version")
        accountsChannel = client.keys.key("channel:accounts")
        invalidateChannel = client.keys.key("channel:invalidate")
        commands = RedisConnection(
            options: .init(url: client.url, purpose: "accounts", timeoutMilliseconds: commandTimeoutMilliseconds),
            metrics: client.metrics)
        let accountsChannel = accountsChannel
        let invalidateChannel = invalidateChannel
        subscriber = RedisConnection(
            options: .init(url: client.url, purpose: "replication", timeoutMilliseconds: max(client.timeoutMilliseconds, 2000)),
            metrics: client.metrics
        ) { [weak replicator] up in
            guard up else {
                Log.warning(
                    "replication: lost the Redis subscription: account changes and cache invalidations from other replicas wait for the reconnect"
                )
                return
            }
            replicator?.connected()
        }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let connection = subscriber
        timer.schedule(deadline: .now() + reconcileInterval, repeating: reconcileInterval, leeway: .seconds(1))
        timer.setEventHandler { [weak replicator] in
            if connection.isUp { replicator?.connected() }
        }
        timer.resume()
        locked_timer = Mutex(timer)
        replicator.attach(self)
        subscriber.subscribe([accountsChannel, invalidateChannel]) { [weak replicator] message in
            guard let replicator else { return }
            let text = String(decoding: message.payload, as: UTF8.self)
            do throws(ConfigError) {
                if message.channel == accountsChannel {
                    replicator.received(try AccountRecord(decoding: text, where: "redis"))
                } else if message.channel == invalidateChannel {
                    replicator.received(try CacheInvalidation(decoding: text))
                }
            } catch {
                // The error names the key at fault, never the text (records hold secrets).
                Log.error("replication: ignored a message on \(message.channel): \(error)")
            }
        }
        // The subscriber may have come up before `attach` above: reconcile once now as well.
        replicator.connected()
    }

    /// Stops the timer and both connections (at exit).
    public func shutdown() {
        locked_timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        subscriber.shutdown()
        commands.shutdown()
    }

    public func write(
        _ record: AccountRecord, ifVersion: Int64?, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void
    ) {
        let body: String
        do {
            body = try record.body()
        } catch {
            return completion(.failure(ReplicationError(.unavailable, "account \(record.id): \(error)")))
        }
        let deadline = Int64((clock.now() * 1000).rounded(.down)) + Int64(commandTimeoutMilliseconds / 2)
        let arguments = [
            "EVAL", Self.writeScript, "2", hashKey, counterKey, record.id, body, String(record.version), accountsChannel, String(deadline),
            ifVersion.map(String.init) ?? "",
        ]
        commands.command(arguments) { result in
            if case .failure(let error) = result, error.code == .connectionLost {
                // Sent, and then the connection broke: Redis may have run it before its deadline.
                return completion(.failure(ReplicationError(.unknownOutcome, "Redis: \(error)")))
            }
            completion(Self.record(result, id: record.id))
        }
    }

    public func offer(_ record: AccountRecord, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void) {
        let body: String
        do {
            body = try record.body()
        } catch {
            return completion(.failure(ReplicationError(.unavailable, "account \(record.id): \(error)")))
        }
        commands.command(["EVAL", Self.offerScript, "2", hashKey, counterKey, record.id, String(record.version), body, accountsChannel]) {
            completion(Self.record($0, id: record.id))
        }
    }

    public func loadAll(completion: @escaping @Sendable (Result<[AccountRecord], ReplicationError>) -> Void) {
        commands.command(["HGETALL", hashKey]) { result in
            switch result {
            case .failure(let error):
                completion(.failure(ReplicationError(.unavailable, "Redis: \(error)")))
            case .success(.array(let items)):
                var records: [AccountRecord] = []
                var index = 0
                while index + 1 < items.count {
                    let id = items[index].string ?? "?"
                    do throws(ConfigError) {
                        guard let text = items[index + 1].string else { throw ConfigError(key: "redis account record", "is not a string") }
                        let record = try AccountRecord(decoding: text, where: "redis")
                        guard record.id == id else { throw ConfigError(key: "redis account record", "is stored under another id") }
                        records.append(record)
                    } catch {
                        Log.error("replication: ignored the Redis record of account \(Log.escaped(id)): \(error)")
                    }
                    index += 2
                }
                completion(.success(records))
            case .success:
                completion(.failure(ReplicationError(.unavailable, "Redis: HGETALL did not answer an array")))
            }
        }
    }

    /// `SET <prefix>replay:<account>:<signature> 1 NX PX <ms>`: kept until the signature's
    /// expiry and `replayMargin` after.
    public func claim(
        account: String, signature: String, expiry: Timestamp, completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void
    ) {
        let milliseconds = max(1000, Int(((expiry - clock.now() + Self.replayMargin) * 1000).rounded(.up)))
        commands.command(["SET", keys.key("replay:\(account):\(signature)"), "1", "NX", "PX", String(milliseconds)]) { result in
            switch result {
            case .success(.null): completion(.success(false))
            case .success(let reply) where reply.isOK: completion(.success(true))
            case .success: completion(.failure(ReplicationError(.unavailable, "Redis: SET NX answered neither OK nor nil")))
            case .failure(let error): completion(.failure(ReplicationError(.unavailable, "Redis: \(error)")))
            }
        }
    }

    public func publish(_ invalidation: CacheInvalidation) {
        let text: String
        do {
            text = try invalidation.encoded()
        } catch {
            Log.error("replication: could not publish a cache change of account \(invalidation.account): \(error)")
            return
        }
        // Account ids and host names hold no glob character (`*?[]\\`); the prefix neither.
        var exact: [String] = []
        var patterns: [String] = []
        switch invalidation.change {
        case .evict(let host):
            for family in RecordFamily.allCases {
                let key = keys.answer(account: invalidation.account, key: CacheKey(host: host, family: family))
                exact.append(key)
                patterns.append(key + ":*")
            }
        case .evictAll:
            patterns.append(keys.key("answer:") + invalidation.account + ":*")
        case .preload:
            break
        }
        let arguments = ["EVAL", Self.invalidateScript, String(exact.count)] + exact + [invalidateChannel, text] + patterns
        commands.command(arguments) { result in
            if case .failure(let error) = result {
                Log.warning("replication: a cache change of account \(invalidation.account) did not reach the other replicas: \(error)")
            }
        }
    }

    /// The record a script returned.
    private static func record(_ result: Result<RedisReply, RedisError>, id: String) -> Result<AccountRecord, ReplicationError> {
        switch result {
        case .failure(let error) where error.code == .server && error.message.hasPrefix("STALE"):
            return .failure(ReplicationError(.conflict, "account \(id): \(error.message.dropFirst(6))"))
        case .failure(let error):
            return .failure(ReplicationError(.unavailable, "Redis: \(error)"))
        case .success(let reply):
            guard let text = reply.string else {
                return .failure(ReplicationError(.unavailable, "Redis: the account script answered no record"))
            }
            do {
                return .success(try AccountRecord(decoding: text, where: "redis"))
            } catch {
                return .failure(ReplicationError(.unavailable, "account \(id): \(error)"))
            }
        }
    }
}

import Foundation
import HTTPDNSCore
import HTTPDNSRedis
import HTTPDNSTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `RedisSharedAccounts.publish` puts on Redis, seen by a plain RESP client subscribed to
/// the invalidation channel of a real redis-server (no hiredis, no replica on the other end).
@Suite(.serialized) struct RedisInvalidationTests {
    /// An eviction deletes the shared answers of the host, then arrives on the channel as sent.
    @Test func anEvictionIsPublishedAfterItsSharedAnswersAreDeleted() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let client = RedisClient(url: try RedisURL(parsing: server.url, key: "redis"), prefix: "t:", timeoutMilliseconds: 10_000)
        let host = HostName("www.example.test")!
        let answer = client.keys.answer(account: "shop", key: CacheKey(host: host, family: .a))
        try server.cli(["SET", answer, "stale"])
        try server.cli(["SET", answer + ":10.0.0.0/8", "stale"])
        let subscriber = try RawRedisSubscriber(port: server.port, channel: client.keys.key("channel:invalidate"))

        let replicator = AccountReplicator(
            records: [], registry: AccountRegistry { id, _ in fatalError("no account \(id) is made here") },
            localStore: UnusedAccountStore())
        let shared = RedisSharedAccounts(client: client, replicator: replicator)
        defer { shared.shutdown() }
        // Published once, with no retry: sent when the connection is up, not queued behind its
        // handshake with the command's timeout running.
        guard await Poll.until(limit: 30, every: .milliseconds(10), { client.metrics.snapshot["accounts"]?.up == true }) else {
            throw HarnessError("the accounts connection did not come up within 30 s")
        }
        let sent = CacheInvalidation(origin: "test", account: "shop", change: .evict(host))
        shared.publish(sent)

        let payload = try subscriber.nextMessage()
        #expect(try CacheInvalidation(decoding: payload) == sent)
        // The script deletes before it publishes: no replica that hears it can read the old answer.
        #expect(try server.cli(["EXISTS", answer, answer + ":10.0.0.0/8"]) == "0")
    }
}

/// An `AccountPersistence` for a replicator that is given no account.
private struct UnusedAccountStore: AccountPersistence {
    func saveAccount(id: String, json: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        completion(.success(()))
    }

    func deleteAccount(id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        completion(.success(()))
    }

    func loadAccounts() throws -> [String: String?] { [:] }
}

/// A RESP2 client on a blocking socket that subscribes to one channel and reads its messages.
private final class RawRedisSubscriber {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects, subscribes and waits for Redis to confirm; every read gives up after 30 s.
    init(port: UInt16, channel: String) throws {
        // Connected before it is stored: `deinit` closes it, and only a connected one.
        fd = try connectToLoopback(port: port, timeout: 30)
        let command = "*2\r\n$9\r\nSUBSCRIBE\r\n$\(channel.utf8.count)\r\n\(channel)\r\n"
        guard send(fd, command, command.utf8.count, Int32(MSG_NOSIGNAL)) == command.utf8.count else {
            throw HarnessError("could not send SUBSCRIBE")
        }
        let confirmation = try readArray()
        guard confirmation.first == "subscribe", confirmation.dropFirst().first == channel else {
            throw HarnessError("SUBSCRIBE answered \(confirmation)")
        }
    }

    deinit { close(fd) }

    /// The payload of the next message on the channel.
    func nextMessage() throws -> String {
        let push = try readArray()
        guard push.count == 3, push[0] == "message" else { throw HarnessError("expected a message, read \(push)") }
        return push[2]
    }

    /// One array of bulk strings and integers (both as text).
    private func readArray() throws -> [String] {
        let header = try readLine()
        guard header.first == "*", let count = Int(header.dropFirst()) else { throw HarnessError("not an array: \(header)") }
        return try (0..<count).map { _ in
            let line = try readLine()
            switch line.first {
            case ":": return String(line.dropFirst())
            case "$":
                guard let length = Int(line.dropFirst()) else { throw HarnessError("bad bulk length: \(line)") }
                while buffer.count < length + 2 { try fill() }
                defer { buffer.removeFirst(length + 2) }
                return String(decoding: buffer[..<length], as: UTF8.self)
            default: throw HarnessError("unexpected reply: \(line)")
            }
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstRange(of: [13, 10]) {
                defer { buffer.removeSubrange(..<end.upperBound) }
                return String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 && errno == EINTR { return }
        guard count > 0 else {
            throw HarnessError(count == 0 ? "Redis closed the connection" : "nothing from Redis within 30 s (errno \(errno))")
        }
        buffer += chunk[..<count]
    }
}

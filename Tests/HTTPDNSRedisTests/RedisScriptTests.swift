import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSRedis

/// Scripts are called by the SHA-1 Redis gives them, and still run after Redis lost them.
@Suite(.serialized) struct RedisScriptTests {
    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        // Two blocks: the padding does not fit in the first.
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func sha1MatchesTheStandardVectors(_ input: String, _ expected: String) {
        #expect(RedisScript(input).sha1 == expected)
    }

    @Test func theAnswerTiersScriptIsNamedAsRedisNamesIt() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        #expect(try server.cli(["SCRIPT", "LOAD", RedisAnswerTier.releaseScript.text]) == RedisAnswerTier.releaseScript.sha1)
    }

    @Test func aScriptRunsAfterRedisFlushedItsScriptsAndIsCachedAgain() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, _) = try RedisAnswerTierTests.tier(server)
        defer { client.shutdown() }
        try await RedisAnswerTierTests.waitUp(client)
        let connection = client.connection("answers")
        let script = RedisScript("return ARGV[1] .. KEYS[1]")
        for round in 0..<3 {
            if round == 1 { try server.cli(["SCRIPT", "FLUSH"]) }
            let reply = await withCheckedContinuation { continuation in
                connection.evaluate(script, keys: [Array("k".utf8)], arguments: [Array("v".utf8)]) { continuation.resume(returning: $0) }
            }
            #expect(reply == .success(.bulk(Array("vk".utf8))), "round \(round)")
            #expect(try server.cli(["SCRIPT", "EXISTS", script.sha1]) == "1")
        }
        // One NOSCRIPT per emptied cache (the first call and the one after the flush), no more.
        #expect(client.metrics.snapshot["answers"]?.errors["server"] == 2)
    }
}

import HTTPDNSCore
import Testing

@Suite struct RedisURLTests {
    @Test func hostPortUserPasswordAndDatabaseAreRead() throws {
        let url = try RedisURL(parsing: "redis://app:s3cr%40t@redis.internal:6380/2", key: "redis")
        #expect(url == RedisURL(host: "redis.internal", port: 6380, user: "app", password: "s3cr@t", database: 2))
        #expect(try RedisURL(parsing: "redis://127.0.0.1:6379", key: "redis") == RedisURL(host: "127.0.0.1", port: 6379))
        #expect(try RedisURL(parsing: "redis://:pw@[::1]:6379/0", key: "redis") == RedisURL(host: "::1", port: 6379, password: "pw"))
    }

    @Test(arguments: ["rediss://h:6379", "http://h:6379", "h:6379", "unix:///tmp/redis.sock"])
    func otherSchemesAreRefusedNamingTheKey(_ text: String) {
        let error = #expect(throws: ConfigError.self) { try RedisURL(parsing: text, key: "HTTPDNS_REDIS") }
        #expect(error?.key == "HTTPDNS_REDIS")
        #expect(error?.message.contains("only redis://") == true)
    }

    @Test(arguments: [
        "redis://h", "redis://h:0", "redis://h:99999", "redis://h:6379/x", "redis://user@h:6379", "redis://u:@h:6379", "redis://bad host:1",
    ])
    func malformedURLsAreRefused(_ text: String) {
        #expect(throws: ConfigError.self) { try RedisURL(parsing: text, key: "redis") }
    }

    @Test func thePasswordNeverAppearsInTheDescriptionOrAnError() throws {
        let url = try RedisURL(parsing: "redis://app:topsecret@h:6379/3", key: "redis")
        #expect(url.description == "redis://app:***@h:6379/3")
        let error = #expect(throws: ConfigError.self) { try RedisURL(parsing: "redis://app:topsecret@h:notaport", key: "redis") }
        #expect(error?.description.contains("topsecret") == false)
    }

    @Test func serviceConfigTakesTheRedisKeysFromFileEnvironmentAndFlags() throws {
        let invocation = try ServiceConfig.load(
            arguments: ["--redis-timeout", "75"],
            environment: ["HTTPDNS_REDIS": "redis://:pw@127.0.0.1:7000/1", "HTTPDNS_REDIS_PREFIX": "fleet-a:"],
            readFile: { _ in throw ConfigError(key: "file", "none") })
        guard case .run(let config) = invocation else {
            Issue.record("not a run")
            return
        }
        #expect(config.redis == RedisURL(host: "127.0.0.1", port: 7000, password: "pw", database: 1))
        #expect(config.redisPrefix == "fleet-a:")
        #expect(config.redisTimeoutMilliseconds == 75)
        #expect(ServiceConfig().redis == nil)
        #expect(ServiceConfig().redisTimeoutMilliseconds == 50)
    }

    @Test(arguments: [
        ("--redis", "http://x:1"), ("--redis-prefix", "has space"), ("--redis-prefix", ""), ("--redis-timeout", "0"),
        ("--redis-timeout", "20000"),
    ])
    func badRedisSettingsStopTheStartNamingTheKey(_ flag: String, _ value: String) {
        let error = #expect(throws: ConfigError.self) {
            try ServiceConfig.load(arguments: [flag, value], environment: [:], readFile: { _ in throw ConfigError(key: "f", "none") })
        }
        #expect(error?.key == flag)
    }
}

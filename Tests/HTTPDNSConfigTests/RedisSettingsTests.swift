import HTTPDNSConfig
import HTTPDNSCore
import Testing

/// The Redis settings (`redis`, `redisPrefix`, `redisTimeout`) as the service configuration reads them.
@Suite struct RedisSettingsTests {
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

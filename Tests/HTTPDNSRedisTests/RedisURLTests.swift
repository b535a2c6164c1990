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
}

import HTTPDNSCore
import Testing

@Suite struct CacheInvalidationTests {
    static let www = HostName("www.example.test")!

    /// Each kind of cache change reads back as it was published.
    @Test(arguments: [
        CacheInvalidation.Change.evict(www),
        .evictAll,
        .preload(hosts: [www, HostName("api.example.test")!], families: [.a, .aaaa], network: "192.0.2.0/24"),
    ])
    func changesRoundTrip(change: CacheInvalidation.Change) throws {
        let message = CacheInvalidation(origin: "r1", account: "shop", change: change)
        #expect(try CacheInvalidation(decoding: message.encoded()) == message)
    }

    /// A message that is not exactly one valid change is refused, naming what is wrong.
    @Test(arguments: [
        #"{"origin":"r1","account":"shop"}"#,
        #"{"origin":"r1","account":"shop","evict":"www.example.test","evictAll":true}"#,
        #"{"origin":"r1","account":"shop","evict":"not a host"}"#,
        #"{"origin":"r1","account":"bad id","evictAll":true}"#,
        #"{"account":"shop","evictAll":true}"#,
        #"{"origin":"r1","account":"shop","preload":["www.example.test"],"families":["MX"],"network":""}"#,
        #"{"origin":"r1","account":"shop","preload":[],"families":["A"],"network":""}"#,
        #"{"origin":"r1","account":"shop","evictAll":true,"extra":1}"#,
    ])
    func badMessagesAreRefused(text: String) {
        #expect(throws: ConfigError.self) { try CacheInvalidation(decoding: text) }
    }
}

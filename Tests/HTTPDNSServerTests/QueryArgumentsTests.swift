@testable import HTTPDNSServer
import Testing

@Suite struct QueryArgumentsTests {
    @Test func lookupsFindEachNameAndTheFirstValueWins() {
        var query: QueryArguments = ["host": "www.example.test", "type": "A"]
        query.append(name: "host", value: "second.example.test")
        query.append(name: "h", value: "")
        #expect(query["host"] == "www.example.test")
        #expect(query["type"] == "A")
        #expect(query["h"] == "")
        #expect(query["ho"] == nil)
        #expect(query["hostx"] == nil)
        #expect(QueryArguments()["host"] == nil)
    }

    @Test func argumentsFromCStringsAreCopied() {
        var query = QueryArguments()
        "client_ip".withCString { name in "198.51.100.7".withCString { query.append(name: name, value: $0) } }
        "short".withCString { query.append(name: $0, value: nil) }
        "client_ip".withCString { name in "203.0.113.1".withCString { query.append(name: name, value: $0) } }
        #expect(query["client_ip"] == "198.51.100.7")
        #expect(query["short"] == "")
    }

    @Test func namesAndValuesWithNULAreDropped() {
        var query = QueryArguments()
        query.append(name: "a\u{0}b", value: "x")
        query.append(name: "c", value: "y\u{0}")
        #expect(query.isEmpty)
    }
}

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

    @Test func argumentsFromDecodedBytesKeepTheirWholeLength() {
        var query = QueryArguments()
        func append(_ name: String, _ value: String?) {
            let name = Array(name.utf8), value = value.map { Array($0.utf8) }
            name.withUnsafeBytes { name in
                if let value { value.withUnsafeBytes { query.append(name: name, value: $0) } } else { query.append(name: name, value: nil) }
            }
        }
        append("client_ip", "198.51.100.7")
        append("short", nil)
        append("client_ip", "203.0.113.1")
        #expect(query["client_ip"] == "198.51.100.7")
        #expect(query["short"] == "")
        #expect(query.refusal == nil)
        append("host", "a.test\u{0}x,b.test")
        #expect(query["host"] == nil)
        #expect(query.refusal?.code == .invalidParameter)
        #expect(query.refusal?.message.contains("'host'") == true)
    }

    @Test func aControlCharacterInANameOrValueIsRefusedNamingTheArgumentEscaped() {
        var query = QueryArguments()
        query.append(name: "a\u{0}b", value: "x")
        query.append(name: "c", value: "y\u{7F}")
        #expect(query.isEmpty)
        // The first refusal is kept; the name is shown with its control character escaped.
        #expect(query.refusal?.message.hasPrefix("argument 'a%00b' holds a control character (%00") == true)
        var second = QueryArguments()
        second.append(name: "type", value: "A\n")
        #expect(second.refusal?.message.hasPrefix("argument 'type' holds a control character (%0A") == true)
    }

    @Test func theRuleRefusesBytes0To31And127Only() {
        let refused = (0...255).filter { DecodedArgument.isControl(UInt8($0)) }
        #expect(refused == Array(0...31) + [127])
        #expect(DecodedArgument.shown(Array("a%b\u{1}".utf8)) == "a%25b%01")
    }
}

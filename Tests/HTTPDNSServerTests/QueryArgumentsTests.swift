import Testing

@testable import HTTPDNSServer

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

    /// `count` and the pairs listed for the signature check (`withPairs`, sized by `count`) are
    /// those kept, in the order received: a repeated name and a refused argument are not.
    @Test func countAndTheListedPairsAreThoseKept() {
        var query: QueryArguments = ["host": "www.example.test", "type": "A"]
        query.append(name: "host", value: "second.example.test")
        query.append(name: "bad", value: "a\u{1}b")
        query.append(name: "é", value: "")
        #expect(query.count == 3)
        let listed = query.withPairs { pairs in
            pairs.map { "\(String(decoding: $0.name, as: UTF8.self))=\(String(decoding: $0.value, as: UTF8.self))" }
        }
        #expect(listed == ["host=www.example.test", "type=A", "é="])
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

    /// Appends raw decoded bytes as libmicrohttpd hands them over.
    private func append(_ query: inout QueryArguments, _ name: [UInt8], _ value: [UInt8]) {
        name.withUnsafeBytes { name in value.withUnsafeBytes { query.append(name: name, value: $0) } }
    }

    @Test(
        arguments: [
            [0xFF], [0x80], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x61, 0xC3, 0x28], Array("sig".utf8) + [0xEF, 0xBF],
        ] as [[UInt8]])
    func invalidUTF8InAValueIsRefusedNotReplaced(value: [UInt8]) {
        var query = QueryArguments()
        append(&query, Array("sign".utf8), value)
        #expect(query["sign"] == nil, "stored as \(query["sign"] ?? "")")
        #expect(query.pairs.isEmpty)
        #expect(query.refusal?.code == .invalidParameter)
        #expect(query.refusal?.message == "argument 'sign' is not valid UTF-8 once percent-decoded")
    }

    @Test func invalidUTF8InANameIsRefusedAndShownEscaped() {
        var query = QueryArguments()
        append(&query, [0x68, 0xFF, 0x25], Array("x".utf8))
        #expect(query.isEmpty)
        #expect(query.refusal?.message == "argument 'h%FF%25' is not valid UTF-8 once percent-decoded")
    }

    @Test func validUTF8ReadsBackAsTheBytesSent() {
        var query = QueryArguments()
        // é, the replacement character itself (sent as such), a 4-byte scalar, U+10FFFF.
        let value: [UInt8] = [0xC3, 0xA9, 0xEF, 0xBF, 0xBD, 0xF0, 0x9F, 0x98, 0x80, 0xF4, 0x8F, 0xBF, 0xBF]
        append(&query, Array("q".utf8), value)
        #expect(query.refusal == nil)
        #expect(query["q"].map { Array($0.utf8) } == value)
        #expect(query.pairs.map { Array($0.value.utf8) } == [value])
    }

    @Test func aControlCharacterIsReportedBeforeInvalidUTF8() {
        var query = QueryArguments()
        append(&query, Array("a".utf8), [0xFF, 0x01])
        #expect(query.refusal?.message.hasPrefix("argument 'a' holds a control character (%01") == true)
    }

    @Test func theRuleRefusesBytes0To31And127Only() {
        let refused = (0...255).filter { DecodedArgument.isControl(UInt8($0)) }
        #expect(refused == Array(0...31) + [127])
        #expect(DecodedArgument.shown(Array("a%b\u{1}".utf8)) == "a%25b%01")
    }
}

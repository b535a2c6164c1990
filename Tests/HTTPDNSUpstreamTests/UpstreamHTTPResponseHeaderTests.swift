import HTTPDNSUpstream
import Testing

/// `UpstreamHTTPResponse.header(_:)` reads one field out of the header block as libcurl delivered it.
@Suite struct UpstreamHTTPResponseHeaderTests {
    static let block = Array(
        ("Content-Type: application/dns-message\r\n" + "date:\t Fri, 04 Dec 2026 20:00:00 GMT \r\n"
            + "Date-Extra: not the date\r\n" + "Location: http://127.0.0.1:1/a:b\r\n" + "X-Twice: first\r\n"
            + "x-twice: second\r\n" + "No colon here\r\n" + "Empty:\r\n" + "\r\n").utf8)

    @Test(arguments: [
        ("Content-Type", "application/dns-message"), ("content-type", "application/dns-message"),
        ("DATE", "Fri, 04 Dec 2026 20:00:00 GMT"), ("Date-Extra", "not the date"),
        ("Location", "http://127.0.0.1:1/a:b"), ("X-Twice", "second"), ("Empty", ""),
    ])
    func aFieldIsFoundWhateverItsCaseWithoutItsWhitespace(_ name: String, _ value: String) {
        #expect(UpstreamHTTPResponse(status: 200, headerBlock: Self.block).header(name) == value)
    }

    @Test(arguments: ["Dat", "Content", "No colon here", "No colon", "Missing", ""])
    func anAbsentFieldOrAPrefixOfOneIsNil(_ name: String) {
        #expect(UpstreamHTTPResponse(status: 200, headerBlock: Self.block).header(name) == nil)
    }

    @Test func aBlockWithoutTheFinalLineBreakStillGivesItsLastField() {
        let response = UpstreamHTTPResponse(status: 200, headerBlock: Array("A: 1\r\nB: 2".utf8))
        #expect(response.header("b") == "2")
        #expect(UpstreamHTTPResponse(status: 200).header("A") == nil)
    }
}

import Testing

@testable import HTTPDNSServer

/// `GET /dns-query` is the DoH JSON API when `Accept` lists `application/dns-json` (any case,
/// parameters and blanks ignored), else RFC 8484; the general path and the cached hit read the
/// header with the one reader.
@Suite struct AcceptDNSJSONTests {
    static let asking = [
        "application/dns-json", "APPLICATION/DNS-JSON", "application/dns-json; q=0.9", "text/html, application/dns-json",
        "application/dns-message,application/dns-json;q=1", " application / dns-json ", "\tapplication/dns-json\t,",
        "application/dns-json,", ",application/dns-json", "application/dns-js on;",
    ]
    static let notAsking = [
        "", "application/dns-message", "application/dns-jsonx", "xapplication/dns-json", "application/dns", ";application/dns-json",
        "application/json", "text/plain; x=application/dns-json", "application/dns-j\u{017F}on",
        "applicatIon/dns-json\u{0301}",
    ]

    private func accepts(_ header: String) -> Bool {
        var header = header
        return header.withUTF8 { DoHJSONHandler.acceptsDNSJSON(UnsafeRawBufferPointer($0)) }
    }

    @Test func theMediaTypeIsFoundInAnyElementOfTheList() {
        for header in Self.asking { #expect(accepts(header), "\(header)") }
        for header in Self.notAsking { #expect(!accepts(header), "\(header)") }
    }

    /// What the reader replaced: split on `,`, the part before `;`, blanks removed, lower-cased.
    @Test func itAgreesWithTheListReadAsText() {
        func byText(_ accept: String) -> Bool {
            accept.split(separator: ",").contains { element in
                element.split(separator: ";", omittingEmptySubsequences: false)[0].filter { $0 != " " && $0 != "\t" }.lowercased()
                    == "application/dns-json"
            }
        }
        for header in Self.asking + Self.notAsking { #expect(accepts(header) == byText(header), "\(header)") }
    }

    /// Both paths pick the same row of `/dns-query` by the header.
    @Test(arguments: [("application/dns-json", .json), ("application/dns-message", .rfc8484), (nil, .rfc8484)] as [(String?, WireFormat)])
    func bothPathsPickTheRowByTheHeader(accept: String?, format: WireFormat) {
        let rows = RouteTable.standard.routes.filter { $0.path == "/dns-query" && $0.method == "GET" }
        var request = HTTPRequest(method: "GET", path: "/dns-query")
        request.accept = accept
        #expect(rows.first { row in withUnsafePointer(to: row) { Route.accepts($0, request) } }?.format == format)
        var bytes = accept
        let viaBytes =
            bytes?.withUTF8 { raw in rows.first { $0.accepts(accept: UnsafeRawBufferPointer(raw)) } }
            ?? rows.first { $0.accepts(accept: nil) }
        #expect(viaBytes?.format == format)
    }
}

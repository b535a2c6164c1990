import Foundation
import HTTPDNSTestSupport
import Testing

/// Bad input of many kinds, against the real binary and over raw sockets where the
/// HTTP framing matters: each is a JSON 4xx that changes nothing, counted in
/// `httpdns_http_requests_total` by its status.
@Suite("Bad input")
struct BadInputTests {
    /// `count` arguments in all, `first` among them.
    private func arguments(_ count: Int, first: String) -> String {
        ([first] + (1..<count).map { "a\($0)=1" }).joined(separator: "&")
    }

    @Test func tooManyQueryArgumentsAreAJSON414InEveryFormat() async throws {
        try await withService { _, service in
            let www = TestZone.www
            let paths = ["/v1/default/resolve", "/default/d", "/resolve", "/dns-query"]
            let firsts = ["host=\(www)", "host=\(www)", "name=\(www)", "dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"]
            for (path, first) in zip(paths, firsts) {
                for count in [65, 230, 400] {
                    let response = try await service.client.get("\(path)?\(arguments(count, first: first))")
                    expectError(response, status: 414, code: "URITooLong")
                }
            }
            // 64 arguments are still read: EMAS ignores the ones it does not know.
            #expect(try await service.client.get("/default/d?\(arguments(64, first: "host=\(www)"))").status == 200)
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_http_requests_total", ["code": "414"]) == 12)
        }
    }

    @Test func aPreloadBodyWithAKeyGivenTwiceIsRefusedAndResolvesNothing() async throws {
        try await withService { _, service in
            let first = TestZone.unique(), second = TestZone.unique()
            let bodies = [
                #"{"hosts":["\#(first)"],"hosts":["\#(second)"]}"#,
                #"{"hosts":["\#(first)","\#(second)"],"type":"A","type":"AAAA"}"#,
            ]
            let asked = try await service.metrics().sum("httpdns_upstream_requests_total")
            for body in bodies {
                let response = try await service.client.request(
                    "POST", "/v1/default/preload", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
                expectError(response, status: 400, code: "InvalidBody")
                #expect(response.json["error"]?["message"]?.string?.contains("given twice") == true, "\(response)")
            }
            #expect(try await service.metrics().sum("httpdns_upstream_requests_total") == asked)
            for host in [first, second] {
                #expect(try await service.client.get("/v1/default/cache?host=\(host)").status == 404)
            }
        }
    }

    @Test func contentLengthWithChunkedIsRefusedAndNothingSmuggledIsAnswered() async throws {
        try await withService { _, service in
            let host = TestZone.unique()
            let body = Array(#"{"hosts":["\#(host)"]}"#.utf8)
            let smuggled = "GET /v1/default/resolve?host=\(TestZone.www) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            for order in [
                ["Content-Length: \(body.count)", "Transfer-Encoding: chunked"], ["Transfer-Encoding: chunked", "Content-Length: 3"],
            ] {
                let head =
                    "POST /v1/default/preload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + order.joined(separator: "\r\n")
                let chunked =
                    Array((head + "\r\n\r\n" + String(body.count, radix: 16) + "\r\n").utf8) + body + Array("\r\n0\r\n\r\n\(smuggled)".utf8)
                let exchange = try await service.client.exchangeRaw(chunked)
                #expect(exchange.text.hasPrefix("HTTP/1.1 400 "), "\(exchange.text)")
                #expect(exchange.text.contains(#""code":"InvalidParameter""#), "\(exchange.text)")
                #expect(exchange.text.lowercased().contains("connection: close"), "\(exchange.text)")
                #expect(exchange.responseCount == 1, "the smuggled request was answered: \(exchange.text)")
                #expect(exchange.closedByServer, "the connection stayed open: \(exchange.text)")
            }
            // Nothing was preloaded; chunked alone is still read.
            #expect(try await service.client.get("/v1/default/cache?host=\(host)").status == 404)
            let alone =
                "POST /v1/default/preload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            let chunked = Array((alone + String(body.count, radix: 16) + "\r\n").utf8) + body + Array("\r\n0\r\n\r\n".utf8)
            let exchange = try await service.client.exchangeRaw(chunked)
            #expect(exchange.text.hasPrefix("HTTP/1.1 200 "), "\(exchange.text)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_http_requests_total", ["code": "400", "endpoint": "other"]) == 2)
        }
    }

    @Test func anEMASQueryOtherThan4Or6Or46IsRefusedInTheEMASFormat() async throws {
        try await withService { _, service in
            let www = TestZone.www
            for query in ["4,6,4,6,4", "4,4", "6,6", "4,", ",6", "4,6,", "46", "4;6"] {
                for path in ["/default/d", "/default/resolve"] {
                    let response = try await service.client.get("\(path)?host=\(www)&query=\(query)")
                    #expect(response.status == 400, "\(path) query=\(query): \(response)")
                    #expect(response.json["code"]?.string == "InvalidParameter", "\(path) query=\(query): \(response)")
                    #expect(response.json["error"] == nil, "not the EMAS format: \(response)")
                }
            }
            for query in ["4", "6", "4,6", "6,4", "4%2C6", ""] {
                #expect(try await service.client.get("/default/d?host=\(www)&query=\(query)").status == 200, "query=\(query)")
            }
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_http_requests_total", ["code": "400", "endpoint": "/{account}/d"]) == 8)
        }
    }
}

import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// Arguments mean exactly what was sent, over a real socket and both paths (fast and full): a
/// decoded argument with NUL or another control character, a `%00` in the path, or a raw NUL in
/// the request line is a 400 `InvalidParameter` that changes nothing (the cache keeps what it
/// had, no upstream is asked). Nothing is read up to a NUL as a C string.
@Suite(.serialized) struct ArgumentBytesOverSocketTests {
    static let secret = "manage-secret-0123456789"

    /// The service behind the real `HTTPServer` with its fast path, as `httpdnsd` runs it; the
    /// cache holds `www.example.test` and `a.test` (A). `fastAnswers` counts fast-path answers.
    private func withServer(
        _ change: (inout AccountConfig) -> Void = { _ in },
        _ body: (ServiceFixture, RawHTTPConnection, StripedCounter) throws -> Void
    ) throws {
        let fixture = ServiceFixture(config: .test(change))
        fixture.seed([
            ("www.example.test", .a, fixture.entry(["127.0.0.11"])),
            ("a.test", .a, fixture.entry(["127.0.0.21"])),
        ])
        let fastAnswers = StripedCounter()
        let server = HTTPServer(
            options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2, maxBodyBytes: 4096),
            fastHandler: { [service = fixture.service] head in
                guard let response = service.fastResponse(head) else { return nil }
                fastAnswers.add(1)
                return .answer(response)
            },
            handler: { [service = fixture.service] in service.handle($0) })
        let port = try server.start()
        defer { server.stop(grace: 0) }
        try body(fixture, try RawHTTPConnection(port: port), fastAnswers)
    }

    /// The 400 every case gets; its message names `argument` with control characters escaped.
    private func expectRefused(_ response: RawResponse, naming argument: String?, _ comment: String) {
        #expect(response.status == 400, "\(comment): \(response.text)")
        #expect(response.errorCode == "InvalidParameter", "\(comment): \(response.text)")
        let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
        if let argument { #expect(message.contains("'\(argument)'"), "\(comment): \(message)") }
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(comment): \(message)")
    }

    /// The cache still holds what it was seeded with and nothing else was asked upstream.
    private func expectUnchanged(_ fixture: ServiceFixture, _ comment: String) {
        let hosts = Set(fixture.engine.cachedEntries().map { $0.0.host.value })
        #expect(hosts == ["www.example.test", "a.test"], "\(comment)")
        #expect(fixture.upstream.queries.isEmpty, "\(comment): \(fixture.upstream.queries)")
    }

    @Test func aNULInTheHostIsRefusedNotReadUpToIt() throws {
        try withServer { fixture, connection, fastAnswers in
            for query in ["host=www.example.test%00zzz", "host=a.test%00x,b.test", "host=a.test%00x%2Cb.test", "host=www.example.test%00"] {
                expectRefused(try connection.request("GET", "/v1/default/resolve?" + query), naming: "host", query)
                expectRefused(try connection.request("GET", "/v1/default/cache?" + query), naming: "host", "cache " + query)
            }
            #expect(fastAnswers.value == 0)
            expectUnchanged(fixture, "resolve")
        }
    }

    @Test(arguments: ["%00", "%01", "%09", "%0a", "%0D", "%1f", "%7f", "%7F"])
    func aControlCharacterInAnyArgumentIsA400OnBothPaths(escape: String) throws {
        try withServer { fixture, connection, fastAnswers in
            let cases: [(query: String, argument: String)] = [
                ("host=www.example.test\(escape)", "host"),
                ("host=www.example.test&type=A\(escape)", "type"),
                ("host=www.example.test&client_ip=192.0.2.1\(escape)", "client_ip"),
                ("host=www.example.test&short=1\(escape)", "short"),
                ("host=www.example.test&x=\(escape)", "x"),
                ("x\(escape)y=1&host=www.example.test", "x%\(escape.dropFirst().uppercased())y"),
                ("host=www.example.test&host=a.test\(escape)", "host"),
                ("host=www.example.test&type=A&type=\(escape)", "type"),
            ]
            for (query, argument) in cases {
                expectRefused(try connection.request("GET", "/v1/default/resolve?" + query), naming: argument, query)
            }
            // The same request without the control character is a hit on the fast path.
            #expect(try connection.request("GET", "/v1/default/resolve?host=www.example.test&type=A&short=1").status == 200)
            #expect(fastAnswers.value == 1)
            expectUnchanged(fixture, escape)
        }
    }

    /// Invalid UTF-8 would read back with U+FFFD in its place (so `%FF` and `%FE` would be one
    /// value, and a signature over the bytes sent would not match): refused like a control character.
    @Test(arguments: ["%FF", "%C3", "%C0%AF", "%ED%A0%80", "%F4%90%80%80"])
    func invalidUTF8InAnyArgumentIsA400OnBothPaths(escape: String) throws {
        try withServer { fixture, connection, fastAnswers in
            let cases: [(query: String, argument: String)] = [
                ("host=www.example.test\(escape)", "host"),
                ("host=www.example.test&type=A\(escape)", "type"),
                ("host=www.example.test&short=1\(escape)", "short"),
                ("host=www.example.test&sign=\(escape)", "sign"),
                ("host=www.example.test&x=a\(escape)", "x"),
            ]
            for (query, argument) in cases {
                let response = try connection.request("GET", "/v1/default/resolve?" + query)
                expectRefused(response, naming: argument, query)
                let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains("not valid UTF-8"), "\(query): \(message)")
            }
            // The same request without the bad bytes is a hit on the fast path.
            #expect(try connection.request("GET", "/v1/default/resolve?host=www.example.test&type=A&short=1").status == 200)
            #expect(fastAnswers.value == 1)
            expectUnchanged(fixture, escape)
        }
    }

    @Test func anEMASRequestWithANULIsRefusedInTheEMASFormat() throws {
        try withServer { fixture, connection, _ in
            let response = try connection.request("GET", "/default/d?host=www.example.test%00zzz")
            #expect(response.status == 400, "\(response.text)")
            #expect(response.object["code"] as? String == "InvalidParameter", "\(response.text)")
            #expect((response.object["message"] as? String)?.contains("'host'") == true, "\(response.text)")
            expectUnchanged(fixture, "emas")
        }
    }

    @Test func aDeleteWithANULEvictsNothing() throws {
        try withServer { fixture, connection, _ in
            for query in ["host=a.test%00x", "host=a.test%00", "%00host=a.test", "host%00=a.test", "x=%01"] {
                let response = try connection.request("DELETE", "/v1/default/cache?" + query)
                expectRefused(response, naming: nil, query)
                expectUnchanged(fixture, query)
            }
        }
    }

    @Test func aNULInThePathOrARawNULInTheRequestLineIsRefused() throws {
        try withServer { fixture, connection, fastAnswers in
            for path in ["/v1/default/resolve%00junk?host=www.example.test", "/v1/default%00x/resolve?host=www.example.test"] {
                expectRefused(try connection.request("GET", path), naming: nil, path)
            }
            // Raw NUL bytes: libmicrohttpd reads the request line as a C string and would drop
            // what follows them (a batch's second host, or the rest of the path).
            let lines = [
                "GET /v1/default/resolve?host=a.test\0,b.test", "GET /v1/default/resolve\0junk?host=www.example.test",
                "DELETE\0X /v1/default/cache?host=a.test", "GET  /v1/default/resolve?host=www.example.test\0",
            ]
            for line in lines {
                let raw = try RawHTTPConnection(port: try port(of: connection))
                raw.write(Array(line.utf8) + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                expectRefused(try raw.readResponse(), naming: nil, line.replacingOccurrences(of: "\0", with: "\\0"))
            }
            // Spaces between method and target are no NUL.
            let spaced = try RawHTTPConnection(port: try port(of: connection))
            spaced.write("GET   /v1/default/resolve?host=www.example.test HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try spaced.readResponse().status == 200)
            #expect(fastAnswers.value == 1)
            // An escape that is no NUL still decodes as before, on the fast path.
            #expect(try connection.request("GET", "/v1/default/res%6Flve?host=www.example.test").status == 200)
            #expect(fastAnswers.value == 2)
            expectUnchanged(fixture, "path")
        }
    }

    @Test func aPreloadHostWithAJSONEscapedNULIsRefusedAndResolvesNothing() throws {
        try withServer { fixture, connection, _ in
            // JSONSerialization decodes `\u0000` into a NUL inside the String: the host check
            // reads the whole string and refuses it.
            for host in [#"a.test\u0000x"#, #"b.test\u0001"#, #"b.test\u007f"#] {
                let body = Array(#"{"hosts":["c.test","\#(host)"]}"#.utf8)
                let response = try connection.request(
                    "POST", "/v1/default/preload", headers: [("Content-Type", "application/json")], body: body)
                #expect(response.status == 400, "\(host): \(response.text)")
                #expect(response.errorCode == "InvalidHost", "\(host): \(response.text)")
                #expect(!response.text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            }
            let query = try connection.request(
                "POST", "/v1/default/preload?client_ip=192.0.2.1%00", body: Array(#"{"hosts":["c.test"]}"#.utf8))
            expectRefused(query, naming: "client_ip", "preload client_ip")
            expectUnchanged(fixture, "preload")
        }
    }

    /// A signature made for the request a truncation would read (`host=a.test`) does not make
    /// the request sent (`host=a.test%00x`) valid: it is refused before the signature is read.
    @Test func aSignedDeleteWithANULIsRefusedBeforeItsSignatureIsChecked() throws {
        try withServer({
            $0.clientKeys = [ClientKey(id: "m1", secret: Self.secret, role: .manage)]
            $0.requireSignedRequests = true
        }) { fixture, connection, _ in
            let t = String(Int(fixture.clock.now()) + 60)
            let canonical = try SignatureV1.canonicalString(
                method: "DELETE", path: "/v1/default/cache", arguments: [("host", "a.test")], expiry: t, body: [])
            let sign = try SignatureV1.signature(secret: Self.secret, canonical: canonical)
            let response = try connection.request("DELETE", "/v1/default/cache?host=a.test%00x&kid=m1&t=\(t)&sign=\(sign)")
            expectRefused(response, naming: "host", "signed delete")
            expectUnchanged(fixture, "signed delete")
            let tampered = try connection.request("DELETE", "/v1/default/cache?host=a.test&kid=m1&t=\(t)%00&sign=\(sign)")
            expectRefused(tampered, naming: "t", "signed delete, NUL in t")
            expectUnchanged(fixture, "signed delete, NUL in t")
            // The request that was signed goes through.
            #expect(try connection.request("DELETE", "/v1/default/cache?host=a.test&kid=m1&t=\(t)&sign=\(sign)").status == 200)
            #expect(!fixture.engine.cachedEntries().contains { $0.0.host.value == "a.test" })
        }
    }

    private func port(of connection: RawHTTPConnection) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(connection.fd, $0, &length) }
        }
        guard result == 0 else { throw RawHTTPError("getpeername: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}

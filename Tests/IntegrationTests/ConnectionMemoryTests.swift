import Foundation
import HTTPDNSTestSupport
import Testing

/// The per-connection buffer (`connectionMemoryLimit`) at its default serves the longest request
/// the API accepts, and a request past the buffer is answered, not dropped.
/// `bench/connection_memory.py` measures the margin at several limits.
@Suite("Connection memory")
struct ConnectionMemoryTests {
    static let token = "integration-admin-token-1234"
    static let secret = "resolve-secret-connection-memory"

    /// 20 hosts of 253 characters (the longest DNS name), distinct, under the test zone's suffix-free `.test`.
    static let hosts = (0..<20).map { index in
        [
            String(format: "%02d", index) + String(repeating: "a", count: 61), String(repeating: "b", count: 63),
            String(repeating: "c", count: 63), String(repeating: "d", count: 56), "test",
        ].joined(separator: ".")
    }

    /// Headers a chain of proxies and a mobile client add (about 2 KB).
    static let proxyHeaders: [String: String] = [
        "User-Agent":
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Pro Build/AP2A.240805.005) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0.6533.103 Mobile Safari/537.36",
        "Accept-Language": "en-US,en;q=0.9,zh-CN;q=0.8,zh;q=0.7",
        "X-Forwarded-For": (0..<8).map { "2001:db8:\(String($0, radix: 16))::\(String($0 + 1, radix: 16))" }.joined(separator: ", "),
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "httpdns.example.com",
        "Forwarded": (0..<8).map { "for=\"[2001:db8:\(String($0, radix: 16))::1]:4711\";proto=https;by=10.0.\($0).1" }.joined(
            separator: ", "),
        "Via": (0..<4).map { "1.1 proxy-\($0).example.net (envoy/1.31)" }.joined(separator: ", "),
        "X-Request-Id": "f3b2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c0d",
        "X-Amzn-Trace-Id": "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,vendor=" + String(repeating: "x", count: 200),
        "X-B3-TraceId": "80f198ee56343ba864fe8b2a57d3eff7",
        "CDN-Loop": "cloudflare; loops=1, akamai; loops=1",
        "CF-Connecting-IP": "2001:db8::1",
        "True-Client-IP": "2001:db8::1",
    ]

    @Test func theLongestAcceptedRequestIsServedAtTheDefaultBufferAndALongerOneGetsA431() async throws {
        #expect(Self.hosts.allSatisfy { $0.count == 253 })
        try await withSignedAccountService(id: "shop", secret: Self.secret, adminToken: Self.token) { _, service in
            let signed = try ClientRequestSigner.sign(
                method: "GET", path: "/v1/shop/resolve", args: [("host", Self.hosts.joined(separator: ","))],
                secret: Self.secret, t: ClientRequestSigner.expiry(in: 300))
            let target = "/v1/shop/resolve?" + signed.signedQuery(kid: "k1")
            #expect(target.utf8.count > 5_000, "the request-target is \(target.utf8.count) bytes")
            let longest = try await service.client.get(target, headers: Self.proxyHeaders)
            #expect(longest.status == 200, "\(longest)")
            #expect(longest.json["results"]?.array != nil, "\(longest)")
            // Past the buffer (16 KiB by default): an answer with a 4xx status, not a closed connection
            // (requestBlocking throws when the connection closes before a response).
            var padded = Self.proxyHeaders
            padded["X-Padding"] = String(repeating: "p", count: 16_384)
            let over = try await service.client.get(target, headers: padded)
            #expect(over.status == 431, "\(over)")
            // The service is unharmed.
            let again = try await service.client.get(target, headers: Self.proxyHeaders)
            #expect(again.status == 200, "\(again)")
        }
    }
}

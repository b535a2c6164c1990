import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// The DoH JSON and HTTPDNS API clients end to end against a Python server on loopback that
/// checks their signatures with `hashlib`.
struct JSONClientsLiveTests {
    private func resolve(_ client: any UpstreamResolver, _ host: String, _ family: RecordFamily = .a) async
        -> Result<UpstreamAnswer, UpstreamError>
    {
        let query = UpstreamQuery(host: HostName(host)!, family: family, timeoutMilliseconds: 30_000)
        return await awaitResult { client.resolve(query, completion: $0) }
    }

    private func code(_ result: Result<UpstreamAnswer, UpstreamError>) -> UpstreamError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    @Test func dohJSONClientResolvesAndMapsErrors() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let client = DoHJSONClient(url: server.baseURL + "/resolve", loop: loop)
            let answer = try await resolve(client, "www.example.test").get()
            #expect(answer.addresses == ["127.0.0.11"])
            #expect(answer.ttl == 30)
            let nx = try await resolve(client, "nope.example.test").get()
            #expect(nx.nxdomain && nx.negativeTTL == 45)
            let failure1 = await resolve(client, "bad.example.test")
            #expect(code(failure1) == .badRequest)
            let failure2 = await resolve(client, "broken.example.test")
            #expect(code(failure2) == .malformed)
            let failure3 = await resolve(client, "other.example.test")
            #expect(code(failure3) == .serverFailure)
            let wrongPath = DoHJSONClient(url: server.baseURL + "/nowhere", loop: loop)
            let failure4 = await resolve(wrongPath, "www.example.test")
            #expect(code(failure4) == .notFound)
        }
    }

    @Test func signedDoHJSONRequestIsAcceptedAndWrongSecretIsPermission() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let signed = DoHJSONClient(
                url: server.baseURL + "/resolve", loop: loop, accountID: "139450", accessKeyId: "myAK",
                accessKeySecret: FakeJSONUpstream.accessKeySecret)
            let answer1 = try await resolve(signed, "www.example.test").get()
            #expect(answer1.addresses == ["127.0.0.11"])
            let wrong = DoHJSONClient(
                url: server.baseURL + "/resolve", loop: loop, accountID: "139450", accessKeyId: "myAK", accessKeySecret: "nope")
            let failure5 = await resolve(wrong, "www.example.test")
            #expect(code(failure5) == .permission)
        }
    }

    @Test func signatureTimestampFollowsServerDateAfterFirstResponse() async throws {
        try await FakeJSONUpstream.with(skew: 1000) { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let client = DoHJSONClient(
                url: server.baseURL + "/resolve", loop: loop, accountID: "139450", accessKeyId: "myAK",
                accessKeySecret: FakeJSONUpstream.accessKeySecret)
            // Our clock is 1000 s behind the server's: the first signature is rejected, and its
            // response's Date header corrects the next one.
            let failure6 = await resolve(client, "www.example.test")
            #expect(code(failure6) == .permission)
            let answer2 = try await resolve(client, "www.example.test").get()
            #expect(answer2.addresses == ["127.0.0.11"])
        }
    }

    @Test func httpdnsAPIClientResolvesSignedAndUnsigned() async throws {
        try await FakeJSONUpstream.with { server in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let unsigned = HTTPDNSAPIClient(url: server.baseURL, loop: loop, accountID: "100000")
            let answer3 = try await resolve(unsigned, "www.example.test").get()
            #expect(answer3.addresses == ["127.0.0.11"])
            let signed = HTTPDNSAPIClient(url: server.baseURL, loop: loop, accountID: "100000", secretKey: FakeJSONUpstream.secretKey)
            let v6 = try await resolve(signed, "www.example.test", .aaaa).get()
            #expect(v6.addresses == ["::1"])
            #expect(v6.ttl == 90)
            let negative = try await resolve(signed, "empty.example.test").get()
            #expect(negative.addresses.isEmpty && negative.negativeTTL == 30)
            let wrongSecret = HTTPDNSAPIClient(url: server.baseURL, loop: loop, accountID: "100000", secretKey: "nope")
            let failure7 = await resolve(wrongSecret, "www.example.test")
            #expect(code(failure7) == .permission)
            let wrongAccount = HTTPDNSAPIClient(url: server.baseURL, loop: loop, accountID: "999")
            let failure8 = await resolve(wrongAccount, "www.example.test")
            #expect(code(failure8) == .permission)
        }
    }
}

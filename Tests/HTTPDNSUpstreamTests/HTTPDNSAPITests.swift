import HTTPDNSCore
import HTTPDNSCrypto
import Testing

@testable import HTTPDNSUpstream

/// EMAS HTTPDNS API bodies and request URLs (WIRE-FORMATS §3).
struct HTTPDNSAPITests {
    private func parse(_ text: String, _ family: RecordFamily = .a) -> Result<UpstreamAnswer, UpstreamError> {
        HTTPDNSAPIParser.parse(Array(text.utf8), family: family)
    }

    @Test func aTTLBeyondIntRangeIsIgnoredInsteadOfATrap() throws {
        let result = try HTTPDNSAPIParser.parse(Array(#"{"host":"a.test","ips":["192.0.2.1"],"ttl":1e40}"#.utf8), family: .a).get()
        #expect(result.addresses == ["192.0.2.1"])
        #expect(result.ttl == nil)
    }

    @Test func answerGivesAddressesOfFamilyWithTTL() throws {
        let body =
            #"{"host":"www.aliyun.com","ips":["192.0.2.1","192.0.2.2"],"ipsv6":["2001:db8::1"],"ttl":60,"origin_ttl":60,"client_ip":"198.51.100.7"}"#
        let a = try parse(body).get()
        #expect(a.addresses == ["192.0.2.1", "192.0.2.2"])
        #expect(a.ttl == 60)
        let aaaa = try parse(body, .aaaa).get()
        #expect(aaaa.addresses == ["2001:db8::1"])
    }

    @Test func emptyListIsNegativeWithTTLAsNegativeTTL() throws {
        let answer = try parse(#"{"host":"x.example","ips":[],"ttl":"30"}"#).get()
        #expect(answer.addresses.isEmpty)
        #expect(!answer.nxdomain)
        #expect(answer.negativeTTL == 30)
        #expect(try parse(#"{"host":"x.example","ips":["192.0.2.1"],"ttl":30}"#, .aaaa).get().negativeTTL == 30)
    }

    @Test func errorCodeBodiesMapToCodes() {
        #expect(parseError(#"{"code":"InvalidAccount"}"#) == .permission)
        #expect(parseError(#"{"code":"InvalidHost"}"#) == .badRequest)
        #expect(parseError(#"{"code":"InternalError"}"#) == .serverFailure)
        #expect(parseError(#"{"host":"x"}"#) == .malformed)
        #expect(parseError("") == .malformed)
        #expect(parseError("[1]") == .malformed)
    }

    private func parseError(_ text: String) -> UpstreamError.Code? {
        if case .failure(let error) = parse(text) { return error.code }
        return nil
    }

    /// python3: hashlib.md5(b'www.aliyun.com-mySecretKey-1700000600').hexdigest()
    @Test func signedURLUsesSignDWithExpiryAndMD5() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let client = HTTPDNSAPIClient(
            url: "http://127.0.0.1:1/", loop: loop, accountID: "100000", secretKey: "mySecretKey",
            clock: FixedClock(time: 1_700_000_000.5))
        let query = UpstreamQuery(
            host: HostName("www.aliyun.com")!, family: .aaaa, timeoutMilliseconds: 1000, clientSubnet: "198.51.100.0/24")
        #expect(
            try client.requestURL(for: query)
                == "http://127.0.0.1:1/100000/sign_d?host=www.aliyun.com&query=6&ip=198.51.100.0&t=1700000600&s=e9933cf8570e725efd5799bab3eba262"
        )
        #expect(client.name == "httpdns:http://127.0.0.1:1/")
    }

    @Test func unsignedURLUsesD() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let client = HTTPDNSAPIClient(url: "http://127.0.0.1:1", loop: loop, accountID: "100000")
        let query = UpstreamQuery(host: HostName("www.aliyun.com")!, family: .a, timeoutMilliseconds: 1000)
        #expect(try client.requestURL(for: query) == "http://127.0.0.1:1/100000/d?host=www.aliyun.com&query=4")
    }
}

/// The factory picks the adapter by kind and names it after the spec.
struct UpstreamFactoryTests {
    @Test func adapterMatchesKindAndNameIsSpecDescription() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        var config = AccountConfig()
        config.accessKeyId = "ak"
        config.accessKeySecret = "secret"
        let json = UpstreamFactory.make(
            UpstreamSpec(kind: .json, url: "http://127.0.0.1:1/resolve"), accountID: "acct", config: config, loop: loop)
        #expect(json is DoHJSONClient)
        #expect(json.name == "json:http://127.0.0.1:1/resolve")
        let query = UpstreamQuery(host: HostName("a.example")!, family: .a, timeoutMilliseconds: 1000)
        #expect(try (json as? DoHJSONClient)?.requestURL(for: query).contains("&uid=acct&ak=ak&ts=") == true)

        let doh = UpstreamFactory.make(
            UpstreamSpec(kind: .doh, url: "http://127.0.0.1:1/dns-query"), accountID: "acct", config: config, loop: loop)
        #expect(doh is DoHWireClient)
        #expect(doh.name == "doh:http://127.0.0.1:1/dns-query")

        let api = UpstreamFactory.make(
            UpstreamSpec(kind: .httpdns, url: "http://127.0.0.1:1"), accountID: "acct", config: config, loop: loop)
        #expect(api is HTTPDNSAPIClient)
        #expect(api.name == "httpdns:http://127.0.0.1:1")

        let system = UpstreamFactory.makeSystemResolver(servers: ["127.0.0.1:1"])
        #expect(system.name == "localdns")
        (system as? SystemResolver)?.shutdown()
    }

    @Test func jsonWithoutCredentialsIsUnsigned() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let json = UpstreamFactory.make(
            UpstreamSpec(kind: .json, url: "http://127.0.0.1:1/resolve"), accountID: "acct", config: AccountConfig(), loop: loop)
        let query = UpstreamQuery(host: HostName("a.example")!, family: .a, timeoutMilliseconds: 1000)
        #expect(try (json as? DoHJSONClient)?.requestURL(for: query) == "http://127.0.0.1:1/resolve?name=a.example&type=1")
    }
}

/// An RFC 8484 GET carries the query as `dns=`, after `?` or after the endpoint's own query.
struct DoHWireRequestURLTests {
    @Test(arguments: [
        ("http://127.0.0.1:1/dns-query", "http://127.0.0.1:1/dns-query?dns="),
        ("http://127.0.0.1:1/dns-query?tenant=x", "http://127.0.0.1:1/dns-query?tenant=x&dns="),
    ])
    func theQueryFollowsTheEndpoint(_ endpoint: String, _ prefix: String) throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let client = DoHWireClient(url: endpoint, loop: loop)
        let query = UpstreamQuery(host: HostName("www.example.test")!, family: .aaaa, timeoutMilliseconds: 1000)
        let message = DNSQueryBuilder.query(host: HostName("www.example.test")!, family: .aaaa, clientSubnet: nil)
        #expect(client.requestURL(for: query) == prefix + Base64URL.encode(message))
    }
}

import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// Request signatures, encodings and date parsing, against values computed independently with
/// Python (`hashlib`, `base64`), pasted with their inputs.
struct SigningTests {
    /// python3: hashlib.sha256(b'139450'+b'mySecret'+b'1700000000'+b'www.taobao.com'+b'myAK').hexdigest()
    @Test func dohJSONKeyIsSHA256OfConcatenation() throws {
        let signer = DoHJSONSigner(accountID: "139450", accessKeyId: "myAK", accessKeySecret: "mySecret")
        #expect(
            try signer.key(name: "www.taobao.com", timestamp: 1_700_000_000)
                == "b674877ba3ed55768594b79dd359469168cef406e36ea6161b8bb0026034f2b5")
    }

    @Test func signedJSONRequestCarriesUidAkTsKey() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let client = DoHJSONClient(
            url: "http://127.0.0.1:1/resolve", loop: loop, accountID: "139450", accessKeyId: "myAK",
            accessKeySecret: "mySecret", clock: FixedClock(time: 1_700_000_000.7))
        let query = UpstreamQuery(host: HostName("www.taobao.com")!, family: .a, timeoutMilliseconds: 1000)
        #expect(
            try client.requestURL(for: query) == "http://127.0.0.1:1/resolve?name=www.taobao.com&type=1"
                + "&uid=139450&ak=myAK&ts=1700000000&key=b674877ba3ed55768594b79dd359469168cef406e36ea6161b8bb0026034f2b5")
    }

    @Test func unsignedJSONRequestHasSubnetEscaped() throws {
        let loop = CurlEventLoop()
        defer { loop.shutdown() }
        let client = DoHJSONClient(url: "http://127.0.0.1:1/resolve?short=1", loop: loop)
        let query = UpstreamQuery(host: HostName("a.example")!, family: .aaaa, timeoutMilliseconds: 1000, clientSubnet: "1.2.3.0/24")
        #expect(
            try client.requestURL(for: query) == "http://127.0.0.1:1/resolve?short=1&name=a.example&type=28&edns_client_subnet=1.2.3.0%2F24"
        )
        // The name (log text, metric label) is scheme, host, port and path: a query may hold credentials.
        #expect(client.name == "json:http://127.0.0.1:1/resolve")
    }

    @Test func httpDateParsesToUnixSeconds() {
        // date -u -d 'Sun, 06 Nov 1994 08:49:37 GMT' +%s  → 784111777
        #expect(ServerClockOffset.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(ServerClockOffset.parseHTTPDate("Tue, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
        #expect(ServerClockOffset.parseHTTPDate("yesterday") == nil)
    }

    @Test func clockOffsetIsLearntFromDateHeaderAndIgnoresSubSecondNoise() {
        let offset = ServerClockOffset()
        offset.learn(dateHeader: "Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_777 - 100.4)
        #expect(offset.seconds == 101)
        offset.learn(dateHeader: "Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_777.9)
        #expect(offset.seconds == 0)
    }
}

/// A clock that always says `time`.
struct FixedClock: WallClock {
    var time: Timestamp
    func now() -> Timestamp { time }
}

import Foundation
import Synchronization
import Testing

@testable import HTTPDNSClient

/// The client's behaviour with a manual clock and a stub transport: cache, stale reuse,
/// failover, system fallback and the clock offset learned from `Date`.
@Suite("HTTPDNSClient")
struct HTTPDNSClientTests {
    static let serviceA = URL(string: "http://127.0.0.1:9001")!
    static let serviceB = URL(string: "http://127.0.0.1:9002")!

    private func client(
        _ transport: StubTransport, clock: ManualHTTPDNSClock = ManualHTTPDNSClock(), services: [URL] = [serviceA],
        reuse: Bool = false, fallback: Bool = false, system: StubSystemResolver = StubSystemResolver([:]),
        credentials: HTTPDNSCredentials? = nil
    ) -> HTTPDNSClient {
        HTTPDNSClient(
            configuration: HTTPDNSClientConfiguration(
                services: services, account: "shop", credentials: credentials, reuseExpiredAnswers: reuse,
                systemResolverFallback: fallback),
            transport: transport, clock: clock, systemResolver: system)
    }

    @Test func signatureV1MatchesTheDocumentedWorkedExample() throws {
        let query = SignatureV1.canonicalQuery([("type", "A"), ("host", "www.example.com,api.example.com")])
        #expect(query == "host=www.example.com%2Capi.example.com&type=A")
        let canonical = SignatureV1.canonicalString(method: "GET", path: "/v1/shop/resolve", query: query, expiry: 1_767_225_600)
        let sign = try SignatureV1.sign(canonical, secret: "example-secret-0123456789")
        #expect(sign == "3f2b9eabe071f60f4f8a149edff7047e03bd9eeb86544846fad1836efd6bb73e")
    }

    @Test func answersComeFromTheCacheUntilTheirTTLEnds() async throws {
        let clock = ManualHTTPDNSClock()
        let transport = StubTransport { _ in StubTransport.answer("a.example", ["192.0.2.1"], ttl: 60) }
        let client = client(transport, clock: clock)
        #expect(try await client.resolve("a.example").source == .service)
        clock.advance(by: 59)
        let cached = try await client.resolve("a.example")
        #expect(cached.source == .cache && cached.ttl == 1 && cached.addresses == ["192.0.2.1"])
        #expect(transport.urls.count == 1)
        clock.advance(by: 1)
        #expect(try await client.resolve("a.example").source == .service)
        #expect(transport.urls.count == 2)
    }

    @Test func anExpiredAnswerIsReusedOnlyWhenAskedAndIsRefreshedMeanwhile() async throws {
        let clock = ManualHTTPDNSClock()
        let served = Counter()
        let transport = StubTransport { _ in StubTransport.answer("a.example", ["192.0.2.\(served.next())"], ttl: 10) }
        let reusing = client(transport, clock: clock, reuse: true)
        #expect(try await reusing.resolve("a.example").addresses == ["192.0.2.1"])
        clock.advance(by: 11)
        let stale = try await reusing.resolve("a.example")
        #expect(stale.source == .stale && stale.ttl == 0 && stale.addresses == ["192.0.2.1"])
        await reusing.waitForRefreshes()
        let fresh = try await reusing.resolve("a.example")
        #expect(fresh.source == .cache && fresh.addresses == ["192.0.2.2"])

        let strict = client(transport, clock: clock)
        _ = try await strict.resolve("a.example")
        clock.advance(by: 11)
        #expect(try await strict.resolve("a.example").source == .service)
    }

    @Test func aServiceThatFailsIsSkippedAndTheOneThatAnsweredIsTriedFirst() async throws {
        let transport = StubTransport { url in
            guard url.port == Self.serviceB.port else { throw StubTransport.Failure() }
            return StubTransport.answer("a.example", ["192.0.2.1"], ttl: 0)
        }
        let client = client(transport, services: [Self.serviceA, Self.serviceB])
        #expect(try await client.resolve("a.example").addresses == ["192.0.2.1"])
        #expect(try await client.resolve("a.example").source == .service)
        #expect(transport.urls.map(\.port) == [9001, 9002, 9002])
    }

    @Test func aServerErrorFailsOverButARefusalDoesNot() async throws {
        let fiveHundred = StubTransport { url in
            url.port == 9001
                ? StubTransport.json(#"{"error":{"code":"UpstreamFailed","message":"x"}}"#, status: 502)
                : StubTransport.answer("a.example", ["192.0.2.1"])
        }
        #expect(try await client(fiveHundred, services: [Self.serviceA, Self.serviceB]).resolve("a.example").source == .service)

        let refusing = StubTransport { url in
            url.port == 9001
                ? StubTransport.json(#"{"error":{"code":"InvalidHost","message":"bad name"}}"#, status: 400)
                : StubTransport.answer("a.example", ["192.0.2.1"])
        }
        await #expect(throws: HTTPDNSClientError.refused(status: 400, code: "InvalidHost", message: "bad name")) {
            try await client(refusing, services: [Self.serviceA, Self.serviceB], fallback: true).resolve("a.example")
        }
        #expect(refusing.urls.count == 1)
    }

    @Test func theSystemResolverAnswersWhenNoServiceDoesAndOnlyThen() async throws {
        let down = StubTransport { _ in throw StubTransport.Failure() }
        let system = StubSystemResolver(["a.example": ["192.0.2.9", "2001:db8::9"]])
        let answer = try await client(down, services: [Self.serviceA, Self.serviceB], fallback: true, system: system)
            .resolve("a.example")
        #expect(answer.source == .system && answer.ipv4 == ["192.0.2.9"] && answer.ipv6 == ["2001:db8::9"])
        #expect(down.urls.count == 2)

        await #expect {
            try await client(down, fallback: false, system: system).resolve("a.example")
        } throws: { error in
            guard case .unavailable(let failures, nil) = error as? HTTPDNSClientError else { return false }
            return failures.count == 1 && failures[0].contains("connection refused")
        }
        #expect(system.count == 1)
    }

    @Test func aBatchIsOneRequestAndAFailedNameFallsBackAlone() async throws {
        let transport = StubTransport { _ in
            StubTransport.json(
                #"{"results":[{"host":"a.example","ips":["192.0.2.1"],"ipsv6":[],"ttl":60},"#
                    + #"{"host":"b.example","error":{"code":"UpstreamFailed","message":"no"}}]}"#)
        }
        let system = StubSystemResolver(["b.example": ["192.0.2.2"]])
        let results = await client(transport, fallback: true, system: system).resolve(["a.example", "b.example"])
        #expect(try results[0].get().source == .service)
        #expect(try results[1].get().source == .system && results[1].get().addresses == ["192.0.2.2"])
        #expect(transport.urls.count == 1 && transport.urls[0].argument("host") == "a.example,b.example")
    }

    @Test func aNameTheAccountDoesNotServeGoesToTheSystemResolverOnlyWithFallback() async throws {
        let refusal = #"{"error":{"code":"DomainNotAllowed","message":"not listed"}}"#
        let single = StubTransport { _ in StubTransport.json(refusal, status: 403) }
        let system = StubSystemResolver(["a.example": ["192.0.2.9"]])
        let answer = try await client(single, services: [Self.serviceA, Self.serviceB], fallback: true, system: system)
            .resolve("a.example")
        #expect(answer.source == .system && answer.ipv4 == ["192.0.2.9"])
        #expect(single.urls.count == 1, "another service would refuse the name too")
        await #expect(throws: HTTPDNSClientError.refused(status: 403, code: "DomainNotAllowed", message: "not listed")) {
            try await client(single, fallback: false, system: system).resolve("a.example")
        }

        let batch = StubTransport { _ in
            StubTransport.json(
                #"{"results":[{"host":"a.example","error":{"code":"DomainNotAllowed","message":"not listed"}},"#
                    + #"{"host":"b.example","ips":["192.0.2.2"],"ipsv6":[],"ttl":60}]}"#)
        }
        let results = await client(batch, fallback: false, system: system).resolve(["a.example", "b.example"])
        #expect(throws: HTTPDNSClientError.refused(status: 403, code: "DomainNotAllowed", message: "not listed")) {
            try results[0].get()
        }
        #expect(try results[1].get().source == .service)
        let fallen = await client(batch, fallback: true, system: system).resolve(["a.example", "b.example"])
        #expect(try fallen[0].get().source == .system)
        #expect(system.count == 2)
    }

    @Test func aWrongDeviceClockIsCorrectedFromTheDateHeader() async throws {
        let clock = ManualHTTPDNSClock()
        let serverNow = clock.now().addingTimeInterval(3600)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: serverNow)
        let transport = StubTransport { url in
            let expiry = TimeInterval(url.argument("t") ?? "") ?? 0
            guard expiry > serverNow.timeIntervalSince1970, expiry <= serverNow.timeIntervalSince1970 + 600 else {
                return StubTransport.json(#"{"error":{"code":"Unauthorized","message":"signature expired"}}"#, status: 401, date: date)
            }
            #expect(url.argument("kid") == "k1" && url.argument("sign")?.count == 64)
            return StubTransport.answer("a.example", ["192.0.2.1"])
        }
        let client = client(transport, clock: clock, credentials: HTTPDNSCredentials(keyID: "k1", secret: "s3cr3t-value"))
        #expect(try await client.resolve("a.example").source == .service)
        #expect(transport.urls.count == 2)
        #expect(await client.serviceClockOffset == 3600)
        await client.clearCache()
        _ = try await client.resolve("a.example")
        #expect(transport.urls.count == 3, "the learned offset signs the next request right the first time")
    }
}

/// A counter shared with a stub's closure.
final class Counter: Sendable {
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

import Foundation
import Testing

@testable import HTTPDNSCore

/// `dns64Prefix`: RFC 6052's address layouts, the key's checks, and the engine answering an AAAA
/// question for an A-only name with synthesized addresses, from the cache and from a miss.
@Suite struct DNS64Tests {
    /// RFC 6052 §2.4's table: 192.0.2.33 under each prefix length.
    @Test(arguments: [
        ("2001:db8::/32", "2001:db8:c000:221::"),
        ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
        ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
        ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
        ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100:0"),
        ("2001:db8:122:344::/96", "2001:db8:122:344::c000:221"),
        ("64:ff9b::/96", "64:ff9b::c000:221"),
    ])
    func embedsAnIPv4AddressAsRFC6052Lays(prefix: String, expected: String) throws {
        let parsed = try #require(DNS64Prefix(prefix))
        #expect(parsed.embedding(0xC000_0221).description == expected)
        #expect(parsed.description == prefix)
    }

    @Test(arguments: [
        "64:ff9b::", "64:ff9b::/95", "64:ff9b::/128", "10.0.0.0/8", "::ffff:0:0/96", "2001:db8::1/32", "2001:db8:0:0:ff00::/96",
        "not a prefix", "",
    ])
    func refusesWhatIsNotAnRFC6052Prefix(text: String) {
        #expect(DNS64Prefix(text) == nil)
    }

    @Test func theKeyIsReadWrittenAndRefusedNamingItself() throws {
        let config = try AccountConfig(json: ["dns64Prefix": "64:ff9b::/96"], path: "accounts.shop")
        #expect(config.dns64Prefix?.description == "64:ff9b::/96")
        #expect(config.jsonObject(redacted: true)["dns64Prefix"] as? String == "64:ff9b::/96")
        #expect(AccountConfig().jsonObject(redacted: true)["dns64Prefix"] == nil)
        #expect(config.lookupOptionsSynthesize && !AccountConfig().lookupOptionsSynthesize)
        #expect(throws: ConfigError.self) { try AccountConfig(json: ["dns64Prefix": 96], path: "accounts.shop") }
        do {
            _ = try AccountConfig(json: ["dns64Prefix": "64:ff9b::/80"], path: "accounts.shop")
            Issue.record("a /80 prefix was accepted")
        } catch {
            #expect(error.key == "accounts.shop.dns64Prefix")
            #expect(error.message.contains("'64:ff9b::/80'") && error.message.contains("32, 40, 48, 56, 64 or 96"))
        }
    }

    @Test func theSynthesizedTTLIsTheAAnswersCappedBySOAMinimumOr600() throws {
        let prefix = try #require(DNS64Prefix("64:ff9b::/96"))
        let soa = try #require(
            NegativeAnswerSOA(
                zone: "example.test.", primary: "ns.example.test.", mailbox: "h.example.test.",
                serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 45))
        let a = ResolvedAnswer(addresses: ["192.0.2.33", "192.0.2.34"], ttl: 250, originTTL: 300, source: .cache)
        let capped = try #require(
            prefix.synthesized(aaaa: ResolvedAnswer(addresses: [], ttl: 20, originTTL: 30, source: .cache, soa: soa), a: a))
        #expect(capped.addresses == ["64:ff9b::c000:221", "64:ff9b::c000:222"])
        #expect(capped.ttl == 45 && capped.originTTL == 45 && capped.synthesized && !capped.nxdomain)
        let noSOA = try #require(prefix.synthesized(aaaa: ResolvedAnswer(addresses: [], ttl: 20, originTTL: 30, source: .cache), a: a))
        #expect(noSOA.ttl == 250 && noSOA.originTTL == 300)
        let long = ResolvedAnswer(addresses: ["192.0.2.33"], ttl: 3000, originTTL: 3600, source: .upstream)
        let lengthy = try #require(prefix.synthesized(aaaa: ResolvedAnswer(addresses: [], ttl: 0, originTTL: 0, source: .cache), a: long))
        #expect(lengthy.ttl == 600 && lengthy.originTTL == 600 && lengthy.source == .upstream)
        // A name that does not exist, one with AAAA records, one without A records: nothing made.
        #expect(prefix.synthesized(aaaa: ResolvedAnswer(addresses: [], ttl: 5, originTTL: 5, source: .cache, nxdomain: true), a: a) == nil)
        #expect(prefix.synthesized(aaaa: ResolvedAnswer(addresses: ["2001:db8::1"], ttl: 5, originTTL: 5, source: .cache), a: a) == nil)
        let empty = ResolvedAnswer(addresses: [], ttl: 5, originTTL: 5, source: .cache)
        #expect(prefix.synthesized(aaaa: empty, a: empty) == nil)
    }

    private static let dns64 = AccountConfig.test { $0.dns64Prefix = DNS64Prefix("64:ff9b::/96") }

    @Test func anAAAAQuestionForAnAOnlyNameIsSynthesizedOnAMissAndOnAHit() throws {
        let fixture = EngineFixture(config: Self.dns64)
        fixture.upstream.setAnswer("v4.example.com", .a, addresses: ["192.0.2.33"], ttl: 300)
        fixture.upstream.setReply("v4.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: 30)))
        fixture.upstream.setAnswer("both.example.com", .a, addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setAnswer("both.example.com", .aaaa, addresses: ["2001:db8::1"], ttl: 300)
        let miss = fixture.resolve("v4.example.com", .aaaa)
        #expect(!miss.fromCache)
        #expect(miss.answer?.addresses == ["64:ff9b::c000:221"])
        #expect(miss.answer?.synthesized == true)
        #expect(fixture.upstream.calls("v4.example.com", .a) == 1)
        // Both answers are cached as the upstream gave them: the hit synthesizes again.
        let hit = fixture.resolve("v4.example.com", .aaaa)
        #expect(hit.fromCache)
        #expect(hit.answer?.addresses == ["64:ff9b::c000:221"] && hit.answer?.synthesized == true)
        #expect(fixture.resolve("v4.example.com", .a).answer?.addresses == ["192.0.2.33"])
        #expect(fixture.upstream.calls("v4.example.com", .a) == 1 && fixture.upstream.calls("v4.example.com", .aaaa) == 1)
        // A name with AAAA records keeps them.
        _ = fixture.resolve("both.example.com", .aaaa)
        let real = fixture.resolve("both.example.com", .aaaa)
        #expect(real.answer?.addresses == ["2001:db8::1"] && real.answer?.synthesized == false)
    }

    @Test func theBorrowedHitSynthesizesAndAnAccountWithoutAPrefixDoesNot() throws {
        let fixture = EngineFixture(config: Self.dns64)
        fixture.upstream.setAnswer("v4.example.com", .a, addresses: ["192.0.2.33"], ttl: 300)
        fixture.upstream.setReply("v4.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: 30)))
        _ = fixture.resolve("v4.example.com", .a)
        _ = fixture.resolve("v4.example.com", .aaaa)
        var name = "v4.example.com"
        let borrowed = name.withUTF8 { bytes in
            fixture.engine.cachedResolution(BorrowedCacheKey(unchecked: UnsafeRawBufferPointer(bytes), family: .aaaa))
        }
        #expect(borrowed?.addresses == ["64:ff9b::c000:221"] && borrowed?.synthesized == true)

        fixture.engine.update(config: AccountConfig.test())
        let plain = fixture.resolve("v4.example.com", .aaaa)
        #expect(plain.fromCache && plain.answer?.addresses == [] && plain.answer?.synthesized == false)
    }
}

extension AccountConfig {
    fileprivate var lookupOptionsSynthesize: Bool { ResolverEngine.LookupOptions(self).synthesizesAAAA }
}

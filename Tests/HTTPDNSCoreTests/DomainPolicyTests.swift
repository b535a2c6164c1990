import Testing

@testable import HTTPDNSCore

/// `DomainPolicy`'s matching: exact names, `*.` wildcards (below the name, not the name
/// itself), deny over allow, case and a trailing dot, and its validation messages.
@Suite struct DomainPolicyTests {
    private func policy(_ mode: DomainPolicy.Mode, allow: [String] = [], deny: [String] = []) throws -> DomainPolicy {
        try DomainPolicy(mode: mode, allow: allow, deny: deny)
    }

    private func allows(_ policy: DomainPolicy, _ name: String) -> Bool {
        var text = name
        return text.withUTF8 { policy.allows(UnsafeRawBufferPointer($0)) }
    }

    @Test func listedAllowsExactNamesAndNamesBelowAWildcardOnly() throws {
        let listed = try policy(.listed, allow: ["www.example.com", "*.example.org"])
        #expect(allows(listed, "www.example.com"))
        #expect(!allows(listed, "example.com"))
        #expect(!allows(listed, "a.www.example.com"))
        #expect(allows(listed, "a.example.org"))
        #expect(allows(listed, "a.b.c.example.org"))
        // A wildcard matches names below its parent, not the parent itself.
        #expect(!allows(listed, "example.org"))
        #expect(!allows(listed, "badexample.org"))
        #expect(!allows(listed, "other.test"))
    }

    @Test func denyWinsOverAllowInBothModes() throws {
        let listed = try policy(.listed, allow: ["*.example.com"], deny: ["ads.example.com", "*.track.example.com"])
        #expect(allows(listed, "www.example.com"))
        #expect(!allows(listed, "ads.example.com"))
        #expect(!allows(listed, "x.track.example.com"))
        #expect(allows(listed, "track.example.com"))
        let any = try policy(.any, deny: ["ads.example.com"])
        #expect(allows(any, "anything.test"))
        #expect(!allows(any, "ads.example.com"))
        #expect(!any.isUnrestricted)
        #expect(try policy(.any, allow: ["x.test"]).isUnrestricted)
        #expect(DomainPolicy().isUnrestricted)
    }

    @Test func matchingIgnoresCaseAndOneTrailingDot() throws {
        let listed = try policy(.listed, allow: ["WWW.Example.com", "*.Example.ORG."], deny: ["Ads.Example.org"])
        #expect(listed.allow == ["www.example.com", "*.example.org"])
        #expect(listed.deny == ["ads.example.org"])
        #expect(allows(listed, "www.EXAMPLE.com"))
        #expect(allows(listed, "www.example.com."))
        #expect(allows(listed, "A.EXAMPLE.ORG."))
        #expect(!allows(listed, "ADS.example.ORG"))
        #expect(!allows(listed, ""))
        #expect(!allows(listed, "."))
        #expect(listed.allows(HostName("www.example.com")!))
    }

    @Test func aLargeListMatchesEveryEntryAndNothingElse() throws {
        let names = (0..<10_000).map { "host\($0).tenant\($0 % 37).test" }
        let listed = try policy(.listed, allow: names + ["*.zone.test"])
        for name in names { #expect(allows(listed, name)) }
        #expect(!allows(listed, "host10000.tenant10.test"))
        #expect(!allows(listed, "tenant1.test"))
        #expect(allows(listed, "deep.below.zone.test"))
    }

    @Test func badPatternsAreRefusedNamingTheirIndex() {
        #expect(
            throws: ConfigError(
                key: "domains.allow[1]", "'*' is not a host name or a wildcard of one (www.example.com, *.example.com)")
        ) { try policy(.listed, allow: ["ok.test", "*"]) }
        #expect(
            throws: ConfigError(
                key: "domains.deny[0]", "'a.*.test' is not a host name or a wildcard of one (www.example.com, *.example.com)")
        ) { try policy(.any, deny: ["a.*.test"]) }
        #expect(
            throws: ConfigError(
                key: "domains.allow[0]", "'bad name' is not a host name or a wildcard of one (www.example.com, *.example.com)")
        ) { try policy(.listed, allow: ["bad name"]) }
        #expect(throws: ConfigError(key: "domains.allow", "is empty and mode is listed: no name could be resolved")) {
            try policy(.listed)
        }
    }
}

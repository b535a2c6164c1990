import HTTPDNSCore
import Testing

/// The account-id rule the config file, the admin API and replicated records share.
@Suite struct AccountIDTests {
    @Test(arguments: [
        "shop", "a-b_C9", "a", "0", "9", "A", "Z", "z", "-", "_", String(repeating: "x", count: 64),
        // Reserved ids are compared case-sensitively, as paths are.
        "V1", "Metrics",
    ])
    func validIDsAreKeptAsTheyAre(_ text: String) throws {
        let id = try #require(AccountID(text))
        #expect(id.value == text)
        #expect(id.description == text)
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 65), "bad id", "shop.eu", "caf\u{E9}",
        // The bytes just outside each accepted range: '/' ':' '@' '[' '`' '{', and ',' '.' beside '-'.
        "a/", "a:", "a@", "a[", "a`", "a{", "a,", "a.", "a\u{0}",
    ])
    func invalidIDsAreRefused(_ text: String) {
        #expect(AccountID(text) == nil)
    }

    @Test(arguments: ["accounts", "v1", "resolve", "dns-query", "healthz", "readyz", "metrics"])
    func reservedIDsAreRefused(_ text: String) {
        #expect(AccountID.reserved.contains(text))
        #expect(AccountID(text) == nil)
    }

    @Test func aSubstringIsCheckedLikeAString() {
        let path = "/shop/d"
        #expect(AccountID(path.dropFirst().prefix(4))?.value == "shop")
        #expect(AccountID("/v1/x".dropFirst().prefix(2)) == nil)
    }

    @Test func theRuleNamesEveryReservedID() {
        #expect(
            AccountID.rule
                == "account ids are 1-64 letters, digits, '-' or '_', and not one of the ids reserved for other routes "
                + "(accounts, dns-query, healthz, metrics, readyz, resolve, v1)")
    }
}

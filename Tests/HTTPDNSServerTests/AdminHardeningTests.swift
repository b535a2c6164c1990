import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// The admin API's token check, its audit summaries, and upstream credentials kept out of sight.
@Suite struct AdminHardeningTests {
    static let token = "s3cr3t-admin"

    @Test(arguments: ["Bearer s3cr3t-admin", "bearer s3cr3t-admin", "BEARER s3cr3t-admin"])
    func theRightTokenPasses(header: String) {
        let fixture = ServiceFixture(adminToken: Self.token)
        #expect(fixture.service.checkAdminToken(header) == .success(true))
    }

    @Test(
        arguments: [
            nil, "Bearer s3cr3t-admiN", "Bearer s3cr3t-admin ", "Bearer s3cr3t", "Bearer s3cr3t-admin-and-more", "Basic s3cr3t-admin",
        ] as [String?])
    func anyOtherTokenFailsWhateverItsLength(header: String?) {
        let fixture = ServiceFixture(adminToken: Self.token)
        #expect(fixture.service.checkAdminToken(header) == .success(false))
    }

    @Test func theChangeSummaryNamesChangedKeysAndHidesSecrets() throws {
        var old = AccountConfig.test()
        old.secretKey = "old-signing-secret"
        var new = old
        new.maxCacheTTL = 600
        new.secretKey = "new-signing-secret"
        new.upstreams = [try UpstreamSpec(parsing: "json:https://dns.example/resolve?token=hunter22", key: "u")]
        let summary = AdminHandler.changeSummary(from: old, to: new)
        #expect(summary.contains("maxCacheTTL 3600->600"))
        #expect(summary.contains(#"secretKey "***"->"***""#))
        #expect(summary.contains("upstreams"))
        #expect(summary.contains("token=***"))
        for secret in ["old-signing-secret", "new-signing-secret", "hunter22"] { #expect(!summary.contains(secret)) }
        #expect(!summary.contains("cacheEnable"))
        #expect(AdminHandler.changeSummary(from: old, to: old) == "changed: nothing")
        let created = AdminHandler.changeSummary(from: nil, to: new)
        #expect(created.contains("maxCacheTTL -->600"))
        #expect(!created.contains("new-signing-secret"))
    }

    @Test func upstreamCredentialsAreShownAsStarsAndKeptWhenSentBack() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let bearer = "Bearer \(Self.token)"
        let body = #"{"upstreams":["json:https://alice:wonder@127.0.0.1:8443/resolve?token=hunter22"],"localDNSFallback":false}"#
        let put = fixture.send("PUT", "/v1/accounts/shop", authorization: bearer, body: Array(body.utf8))
        #expect(put.status == 201)
        for secret in ["wonder", "alice", "hunter22"] { #expect(!put.text.contains(secret)) }
        let got = fixture.get("/v1/accounts/shop", authorization: bearer)
        #expect(got.text.contains("json:https://***@127.0.0.1:8443/resolve?token=***"))
        // PUT back what GET showed: the stored credentials stay.
        let config = try #require((got.object["config"] as? [String: Any]))
        let again = try JSONSerialization.data(withJSONObject: ["upstreams": config["upstreams"]!, "localDNSFallback": false])
        #expect(fixture.send("PUT", "/v1/accounts/shop", authorization: bearer, body: Array(again)).status == 200)
        #expect(
            fixture.registry.engine("shop")?.config.upstreams.first?.text
                == "json:https://alice:wonder@127.0.0.1:8443/resolve?token=hunter22")
        // Stars that stand for nothing stored are refused, and change nothing.
        let unknown = #"{"upstreams":["json:https://***@127.0.0.2/resolve"],"localDNSFallback":false}"#
        let refused = fixture.send("PUT", "/v1/accounts/shop", authorization: bearer, body: Array(unknown.utf8))
        #expect(refused.status == 400)
        #expect(
            fixture.registry.engine("shop")?.config.upstreams.first?.text
                == "json:https://alice:wonder@127.0.0.1:8443/resolve?token=hunter22")
    }
}

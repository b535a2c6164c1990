import HTTPDNSCore
import Testing

/// Credentials in an upstream URL never reach a log or a metric label (`description`), are
/// `***` in what the admin API shows (`redactedText`), and are kept in full for the store (`text`).
@Suite struct UpstreamRedactionTests {
    private func spec(_ text: String) throws -> UpstreamSpec { try UpstreamSpec(parsing: text, key: "upstreams[0]") }

    @Test func theLabelIsSchemeHostPortAndPathOnly() throws {
        let upstream = try spec("json:https://user:p4ssw0rd@dns.example:8443/resolve?token=t0k3n&edns=1#frag")
        #expect(upstream.description == "json:https://dns.example:8443/resolve")
        #expect(try spec("doh:http://127.0.0.1:8053/dns-query").description == "doh:http://127.0.0.1:8053/dns-query")
        #expect(try spec("doh:https://[::1]:8443/dns-query?key=k").description == "doh:https://[::1]:8443/dns-query")
        #expect(try spec("json:https://dns.example?secret=s").description == "json:https://dns.example")
    }

    @Test(arguments: ["token", "api_key", "apiKey", "secret", "password", "sig", "Authorization", "access_token", "X-Session"])
    func credentialLikeQueryValuesAreRedacted(name: String) throws {
        let upstream = try spec("json:https://dns.example/resolve?\(name)=hunter22&type=A")
        #expect(upstream.redactedText == "json:https://dns.example/resolve?\(name)=***&type=A")
        #expect(!upstream.description.contains("hunter22"))
        #expect(upstream.hasCredentials)
        #expect(upstream.text == "json:https://dns.example/resolve?\(name)=hunter22&type=A")
    }

    @Test func userInformationIsRedactedWhole() throws {
        let upstream = try spec("httpdns:https://alice:wonder@api.example/")
        #expect(upstream.redactedText == "httpdns:https://***@api.example/")
        #expect(upstream.description == "httpdns:https://api.example/")
    }

    @Test func aURLWithoutCredentialsIsShownAsWritten() throws {
        let upstream = try spec("json:http://127.0.0.1:8053/resolve?edns=1")
        #expect(upstream.redactedText == upstream.text)
        #expect(!upstream.hasCredentials)
    }

    @Test func aParseErrorDoesNotEchoTheCredentials() throws {
        let error = #expect(throws: ConfigError.self) { try spec("json:https://user:hunter22@/resolve") }
        #expect(error?.description.contains("hunter22") == false)
    }

    @Test func theRedactedAccountJSONHidesCredentialsAndTheFullOneKeepsThem() throws {
        var config = AccountConfig()
        config.upstreams = [try spec("json:https://dns.example/resolve?token=hunter22")]
        #expect(try !config.jsonText(redacted: true).contains("hunter22"))
        #expect(try config.jsonText(redacted: false).contains("hunter22"))
    }
}

import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// Once an account requires signatures, a caller without a valid key cannot tell which
/// accounts or key ids exist: against the real binary, every wire format answers a missing
/// account, an unknown key id and a wrong signature with the same status, headers that matter
/// and body byte for byte. Signatures are made by Python (`ClientRequestSigner`, hashlib).
@Suite("Hidden accounts")
struct AccountHidingTests {
    static let token = "integration-admin-token-hide"
    static let secret = "hidden-secret-integration-01"
    static let wrong = "not-the-secret-integration-02"

    /// Two requests a caller without a key must not tell apart.
    struct Pair {
        var label: String
        var existing: (method: String, path: String, headers: [String: String], body: [UInt8]?)
        var missing: (method: String, path: String, headers: [String: String], body: [UInt8]?)
    }

    private func v1Signed(_ method: String, _ path: String, _ args: [(String, String)], kid: String, secret: String) throws -> String {
        let signed = try ClientRequestSigner.sign(
            method: method, path: path, args: args, secret: secret, t: ClientRequestSigner.expiry(in: 120))
        return "\(path)?\(signed.signedQuery(kid: kid))"
    }

    private func emasSigned(_ account: String, secret: String) throws -> String {
        let t = ClientRequestSigner.expiry(in: 120)
        return "/\(account)/sign_d?host=\(TestZone.www)&t=\(t)&s=\(try pythonHexDigest("md5", "\(TestZone.www)-\(secret)-\(t)"))"
    }

    private func dohJSONSigned(_ uid: String, ak: String, secret: String) throws -> String {
        let ts = ClientRequestSigner.expiry(in: 0)
        let name = TestZone.www
        return "/resolve?name=\(name)&uid=\(uid)&ak=\(ak)&ts=\(ts)&key=\(try pythonHexDigest("sha256", "\(uid)\(secret)\(ts)\(name)\(ak)"))"
    }

    private func pairs() throws -> [Pair] {
        let www = TestZone.www
        let dns = RFC8484Tests.base64URL(try DNSQueryWriter.query(name: www, type: 1, id: 4242))
        let message = try DNSQueryWriter.query(name: www, type: 1, id: 4243)
        let dnsMessage = ["Content-Type": "application/dns-message"]
        let dnsJSON = ["Accept": "application/dns-json"]
        func get(_ path: String, _ headers: [String: String] = [:]) -> (String, String, [String: String], [UInt8]?) {
            ("GET", path, headers, nil)
        }
        let args = [("host", www)]
        return [
            Pair(label: "v1 unsigned", existing: get("/v1/shop/resolve?host=\(www)"), missing: get("/v1/nosuch/resolve?host=\(www)")),
            Pair(
                label: "v1 unsigned DELETE", existing: ("DELETE", "/v1/shop/cache?host=\(www)", [:], nil),
                missing: ("DELETE", "/v1/nosuch/cache?host=\(www)", [:], nil)),
            Pair(
                label: "v1 wrong secret / missing account",
                existing: get(try v1Signed("GET", "/v1/shop/resolve", args, kid: "k1", secret: Self.wrong)),
                missing: get(try v1Signed("GET", "/v1/nosuch/resolve", args, kid: "k1", secret: Self.secret))),
            Pair(
                label: "v1 unknown key id / known key id",
                existing: get(try v1Signed("GET", "/v1/shop/resolve", args, kid: "nobody", secret: Self.secret)),
                missing: get(try v1Signed("GET", "/v1/shop/resolve", args, kid: "k1", secret: Self.wrong))),
            Pair(label: "EMAS /d", existing: get("/shop/d?host=\(www)"), missing: get("/nosuch/d?host=\(www)")),
            Pair(label: "EMAS /resolve", existing: get("/shop/resolve?host=\(www)"), missing: get("/nosuch/resolve?host=\(www)")),
            Pair(
                label: "EMAS sign_d", existing: get(try emasSigned("shop", secret: Self.wrong)),
                missing: get(try emasSigned("nosuch", secret: Self.secret))),
            Pair(
                label: "DoH JSON unsigned", existing: get("/resolve?name=\(www)&uid=shop"), missing: get("/resolve?name=\(www)&uid=nosuch")),
            Pair(
                label: "DoH JSON at /dns-query", existing: get("/dns-query?name=\(www)&uid=shop", dnsJSON),
                missing: get("/dns-query?name=\(www)&uid=nosuch", dnsJSON)),
            Pair(
                label: "DoH JSON wrong secret / missing account", existing: get(try dohJSONSigned("shop", ak: "k1", secret: Self.wrong)),
                missing: get(try dohJSONSigned("nosuch", ak: "k1", secret: Self.secret))),
            Pair(
                label: "DoH JSON unknown ak / known ak", existing: get(try dohJSONSigned("shop", ak: "nobody", secret: Self.secret)),
                missing: get(try dohJSONSigned("shop", ak: "k1", secret: Self.wrong))),
            Pair(label: "RFC 8484 GET", existing: get("/v1/shop/dns-query?dns=\(dns)"), missing: get("/v1/nosuch/dns-query?dns=\(dns)")),
            Pair(
                label: "RFC 8484 POST", existing: ("POST", "/v1/shop/dns-query", dnsMessage, message),
                missing: ("POST", "/v1/nosuch/dns-query", dnsMessage, message)),
            Pair(
                label: "RFC 8484 GET signed with an unknown key id",
                existing: get(try v1Signed("GET", "/v1/shop/dns-query", [("dns", dns)], kid: "nobody", secret: Self.secret)),
                missing: get(try v1Signed("GET", "/v1/nosuch/dns-query", [("dns", dns)], kid: "k1", secret: Self.secret))),
        ]
    }

    @Test func aCallerWithoutAKeyGetsTheSameAnswerWhetherTheAccountOrKeyExists() async throws {
        try await withSignedAccountService(id: "shop", secret: Self.secret, adminToken: Self.token) { _, service in
            for pair in try pairs() {
                let existing = try await service.client.request(
                    pair.existing.method, pair.existing.path, headers: pair.existing.headers, body: pair.existing.body)
                let missing = try await service.client.request(
                    pair.missing.method, pair.missing.path, headers: pair.missing.headers, body: pair.missing.body)
                #expect((401...403).contains(existing.status), "\(pair.label): \(existing)")
                #expect(missing.status == existing.status, "\(pair.label): \(missing) beside \(existing)")
                #expect(missing.text == existing.text, "\(pair.label): \(missing.text) beside \(existing.text)")
                #expect(missing.header("www-authenticate") == existing.header("www-authenticate"), "\(pair.label)")
                #expect(missing.header("content-type") == existing.header("content-type"), "\(pair.label)")
            }
            // EMAS /ss names no secret: it answers for any account name alike.
            let ss = try await service.client.get("/shop/ss")
            let missingSS = try await service.client.get("/nosuch/ss")
            #expect(ss.status == 200 && missingSS.status == 200 && ss.text == missingSS.text, "\(ss) beside \(missingSS)")
        }
    }

    @Test func withEveryAccountOpenAMissingAccountIsStill404() async throws {
        try await withSignedAccountService(id: "shop", secret: Self.secret, adminToken: Self.token) { _, service in
            let hidden = try await service.client.get("/v1/nosuch/resolve?host=\(TestZone.www)")
            #expect(hidden.status == 401, "\(hidden)")
            let removed = try await service.client.delete("/v1/accounts/shop", headers: ["Authorization": "Bearer \(Self.token)"])
            #expect(removed.status == 200 || removed.status == 204, "\(removed)")
            expectError(try await service.client.get("/v1/nosuch/resolve?host=\(TestZone.www)"), status: 404, code: "UnknownAccount")
            expectError(try await service.client.get("/v1/shop/resolve?host=\(TestZone.www)"), status: 404, code: "UnknownAccount")
        }
    }
}

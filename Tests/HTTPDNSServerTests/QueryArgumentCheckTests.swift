import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// The management and admin endpoints refuse a query argument they do not read (400 naming it)
/// rather than ignore it, and change nothing when they do.
@Suite struct QueryArgumentCheckTests {
    static let token = "s3cr3t-admin"

    @Test(arguments: [
        ("GET", "/v1/default/cache", ["type": "MX"], "type"),
        ("GET", "/v1/default/cache", ["expired": "1"], "expired"),
        ("GET", "/v1/default/cache", ["limt": "5"], "limt"),
        ("GET", "/v1/default/cache", ["host": "www.example.test", "limit": "5"], "limit"),
        ("DELETE", "/v1/default/cache", ["hots": "www.example.test"], "hots"),
        ("GET", "/v1/default/stats", ["type": "A"], "type"),
        ("POST", "/v1/default/cache/refresh", ["host": "www.example.test"], "host"),
        ("GET", "/v1/accounts", ["limit": "1"], "limit"),
        ("DELETE", "/v1/accounts/default", ["force": "1"], "force"),
    ])
    func anArgumentTheEndpointDoesNotReadIsA400NamingIt(method: String, path: String, query: [String: String], name: String) throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.11"], ttl: 300))])
        let exchange = fixture.send(method, path, query: query, authorization: "Bearer \(Self.token)")
        #expect(exchange.status == 400, "\(method) \(path) \(query)")
        #expect(exchange.errorCode == "InvalidParameter")
        #expect(exchange.errorMessage?.contains("'\(name)'") == true, "\(exchange.errorMessage ?? "")")
        // Nothing changed: the entry and the account are still there.
        #expect(fixture.get("/v1/default/cache", ["host": "www.example.test"]).status == 200)
        #expect(fixture.registry.ids == ["default"])
    }

    @Test func theArgumentsAnEndpointReadsAreAccepted() {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.11"], ttl: 300))])
        #expect(fixture.get("/v1/default/cache", ["limit": "5", "cursor": ""]).status == 200)
        #expect(fixture.get("/v1/default/cache", ["host": "www.example.test", "type": "A", "expired": "1", "short": "0"]).status == 200)
        #expect(fixture.get("/v1/default/stats", ["limit": "5", "domain": "www.example.test"]).status == 200)
        #expect(fixture.send("DELETE", "/v1/default/cache", query: ["host": "www.example.test"]).status == 200)
    }
}

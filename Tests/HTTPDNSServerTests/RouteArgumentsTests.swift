import Testing

@testable import HTTPDNSServer

/// Which query arguments a listed route refuses, compared as bytes where the request keeps them.
@Suite struct RouteArgumentsTests {
    private func refused(_ name: String, by pattern: String = "GET /v1/{account}/resolve") -> Bool {
        let allowed = RouteArguments.table[pattern]!
        return RouteArguments.refusal(QueryArguments([name: "1"]), allowed, method: "GET", path: "/v1/a/resolve") != nil
    }

    @Test(arguments: ["host", "type", "client_ip", "short", "t", "kid", "sign", "sdns-appver", "sdns-"])
    func whatTheRouteReadsIsTaken(_ name: String) {
        #expect(!refused(name))
    }

    /// Names of a taken name's length with other bytes, its prefixes and extensions, `sdns` without
    /// its dash, and the empty name.
    @Test(arguments: ["hots", "hos", "hostt", "typ", "Host", "sdns", "sdnsx", "sdns_appver", ""])
    func anyOtherNameIsRefused(_ name: String) {
        #expect(refused(name))
    }

    @Test func parametersAreTakenOnlyWhereTheRouteReadsThem() {
        #expect(!refused("sdns-os", by: "GET /v1/{account}/policy/explain"))
        #expect(refused("sdns-os", by: "DELETE /v1/{account}/cache"))
        #expect(refused("limit", by: "DELETE /v1/{account}/cache"))
        #expect(!refused("host", by: "DELETE /v1/{account}/cache"))
    }
}

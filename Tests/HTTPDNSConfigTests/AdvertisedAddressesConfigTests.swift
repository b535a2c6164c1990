import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSConfig

/// `advertisedAddresses` (what the EMAS `/ss` path answers) and the account ids it reserves.
@Suite struct AdvertisedAddressesConfigTests {
    @Test func theDefaultIsTheListenAddressUnlessItIsAWildcard() throws {
        #expect(try #require(try ConfigLoading().config()).effectiveAdvertisedAddresses == ["127.0.0.1:8080"])
        #expect(try #require(try ConfigLoading().config(["--listen", "0.0.0.0:8080"])).effectiveAdvertisedAddresses.isEmpty)
        #expect(try #require(try ConfigLoading().config(["--listen", "[::]:8080"])).effectiveAdvertisedAddresses.isEmpty)
    }

    @Test func fileEnvironmentAndFlagGiveTheList() throws {
        let file = try #require(
            try ConfigLoading.file(#"{"advertisedAddresses": ["203.0.113.5:443", "[2001:db8::5]:443", "dns.example.com"]}"#)
                .config(["--config", "/etc/httpdnsd.json"]))
        #expect(file.effectiveAdvertisedAddresses == ["203.0.113.5:443", "[2001:db8::5]:443", "dns.example.com"])
        let env = try #require(try ConfigLoading().config(env: ["HTTPDNS_ADVERTISED_ADDRESSES": "203.0.113.5, 2001:db8::5"]))
        #expect(env.effectiveAdvertisedAddresses == ["203.0.113.5", "2001:db8::5"])
        let flag = try #require(try ConfigLoading().config(["--advertised-addresses", "203.0.113.6:8080"]))
        #expect(flag.effectiveAdvertisedAddresses == ["203.0.113.6:8080"])
    }

    @Test(arguments: ["203.0.113.5:0", "203.0.113.5:70000", "[203.0.113.5]:80", "bad host!", "[2001:db8::5]x"])
    func aBadEntryIsRefusedWithItsKey(entry: String) {
        let error = ConfigLoading().error(["--advertised-addresses", entry])
        #expect(error?.key == "--advertised-addresses", "\(String(describing: error))")
    }

    @Test func aReservedAccountIDInTheFileIsRefusedWithTheRule() {
        let error = ConfigLoading.fileError(#"{"accounts": {"metrics": {}}}"#)
        #expect(error?.key == "accounts.metrics")
        #expect(error?.message.contains("reserved") == true)
        #expect(error?.message.contains("dns-query") == true)
    }
}

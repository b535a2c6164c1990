import HTTPDNSCore
import Testing

@Suite struct ClientNetworkTests {
    // MARK: Reduction to /24 and /56

    @Test(arguments: [
        ("192.0.2.77", "192.0.2.0/24"),
        ("198.51.100.0", "198.51.100.0/24"),
        ("10.255.255.255", "10.255.255.0/24"),
        ("0.0.0.0", "0.0.0.0/24"),
        ("2001:db8:1234:5678::1", "2001:db8:1234:5600::/56"),
        ("2001:0DB8:00AB:CDEF:1:2:3:4", "2001:db8:ab:cd00::/56"),
        ("2001:db8:0:ff00::1", "2001:db8:0:ff00::/56"),
        ("2001:db8:0:ff::", "2001:db8::/56"),
        ("2001:db8::", "2001:db8::/56"),
        ("::1", "::/56"),
    ])
    func addressIsReducedToItsNetworkInCanonicalText(_ address: String, _ network: String) {
        #expect(ClientNetwork.network(ofAddress: address) == network)
    }

    @Test(arguments: [
        ("::ffff:192.0.2.77", "192.0.2.0/24"),
        ("::FFFF:c633:6407", "198.51.100.0/24"),
    ])
    func ipv4MappedIPv6CountsAsIPv4(_ address: String, _ network: String) {
        #expect(ClientNetwork.network(ofAddress: address) == network)
    }

    @Test func addressesOfOneNetworkShareItAndNeighboursDoNot() {
        let network = ClientNetwork.network(ofAddress:)
        #expect(network("192.0.2.1") == network("192.0.2.254"))
        #expect(network("192.0.2.1") != network("192.0.3.1"))
        #expect(network("2001:db8:0:1200::1") == network("2001:db8:0:12ff:ffff::"))
        #expect(network("2001:db8:0:1200::1") != network("2001:db8:0:1300::1"))
    }

    @Test(arguments: ["", "example.test", "192.0.2", "192.0.2.1/24", " 192.0.2.1", "fe80::1%"])
    func textThatIsNotAnAddressHasNoNetwork(_ text: String) {
        #expect(ClientNetwork.network(ofAddress: text) == nil)
    }

    // MARK: CIDR

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("192.0.2.7", "192.0.2.7/32"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("::1", "::1/128"),
        ("::1/128", "::1/128"),
        ("2001:DB8::/32", "2001:db8::/32"),
        ("::/0", "::/0"),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ("::ffff:192.0.2.7", "192.0.2.7/32"),
    ])
    func cidrParsesNetworksAndPlainAddresses(_ text: String, _ rendered: String) {
        #expect(CIDR(text)?.description == rendered)
    }

    @Test(arguments: [
        "", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8",
        "10.1.0.0/8", "2001:db8::1/64", "10.0.0.0 /8", "localhost", "10.0.0.0/0008",
    ])
    func cidrRejectsMalformedTextAndHostBits(_ text: String) {
        #expect(CIDR(text) == nil)
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true),
        ("10.0.0.0/8", "11.0.0.0", false),
        ("172.16.0.0/12", "172.31.255.255", true),
        ("172.16.0.0/12", "172.32.0.0", false),
        ("192.0.2.7", "192.0.2.7", true),
        ("192.0.2.7", "192.0.2.8", false),
        ("0.0.0.0/0", "203.0.113.9", true),
        ("0.0.0.0/0", "::1", false),
        ("10.0.0.0/8", "::ffff:10.1.2.3", true),
        ("::ffff:10.0.0.0/104", "10.1.2.3", true),
        ("::1", "::1", true),
        ("::1", "::2", false),
        ("::1", "127.0.0.1", false),
        ("2001:db8:1200::/39", "2001:db8:13ff::1", true),
        ("2001:db8:1200::/39", "2001:db8:1400::1", false),
        ("::/0", "2001:db8::1", true),
    ])
    func cidrContainsExactlyTheAddressesOfItsPrefix(_ cidr: String, _ address: String, _ contained: Bool) throws {
        let network = try #require(CIDR(cidr))
        let candidate = try #require(IPAddress(address))
        #expect(network.contains(candidate) == contained)
    }

    // MARK: Choosing the address

    private let proxies = ["10.0.0.0/8", "::1"].compactMap { CIDR($0) }

    private func select(clientIP: String? = nil, xff: String? = nil, peer: String? = "10.0.0.2") -> String {
        ClientNetwork.select(clientIP: clientIP, forwardedFor: xff, peer: peer.flatMap(IPAddress.init), trustedProxies: proxies)
    }

    @Test func clientIPParameterWinsOverEverything() {
        #expect(select(clientIP: "198.51.100.7", xff: "203.0.113.9") == "198.51.100.0/24")
        #expect(select(clientIP: "2001:db8:1234::1", peer: "192.0.2.1") == "2001:db8:1234::/56")
    }

    @Test func untrustedPeerIsUsedAndItsForwardedForIgnored() {
        #expect(select(xff: "203.0.113.9", peer: "192.0.2.1") == "192.0.2.0/24")
        #expect(
            ClientNetwork.select(clientIP: nil, forwardedFor: "203.0.113.9", peer: IPAddress("10.0.0.2"), trustedProxies: [])
                == "10.0.0.0/24")
    }

    @Test func trustedPeerWithoutForwardedForIsUsed() {
        #expect(select() == "10.0.0.0/24")
    }

    @Test func trustedPeerForwardsTheRightMostUntrustedAddress() {
        #expect(select(xff: "203.0.113.9") == "203.0.113.0/24")
        // A client forging X-Forwarded-For only adds addresses to the left of the real one.
        #expect(select(xff: "1.2.3.4, 203.0.113.9") == "203.0.113.0/24")
        // Trusted proxies in the chain are skipped.
        #expect(select(xff: "1.2.3.4, 203.0.113.9, 10.1.1.1, 10.2.2.2") == "203.0.113.0/24")
        #expect(select(xff: "2001:db8:5555::1, ::1", peer: "::1") == "2001:db8:5555::/56")
    }

    @Test func everyAddressTrustedGivesTheLeftMost() {
        #expect(select(xff: "10.9.9.9, 10.1.1.1") == "10.9.9.0/24")
    }

    @Test func walkStopsAtAnElementThatIsNotAnAddress() {
        // Left of "unknown" nothing was written by a trusted proxy: the last trusted hop counts.
        #expect(select(xff: "1.2.3.4, unknown, 10.7.7.7") == "10.7.7.0/24")
        #expect(select(xff: "1.2.3.4, garbage") == "10.0.0.0/24")
    }

    @Test func emptyElementsAndBlanksAreIgnored() {
        #expect(select(xff: " 203.0.113.9 ,, \t") == "203.0.113.0/24")
        #expect(select(xff: "") == "10.0.0.0/24")
    }

    @Test func elementsWithPortsAreUnderstood() {
        #expect(select(xff: "203.0.113.9:4711") == "203.0.113.0/24")
        #expect(select(xff: "[2001:db8:77::1]:443") == "2001:db8:77::/56")
        #expect(select(xff: "[2001:db8:7700::1]") == "2001:db8:7700::/56")
    }

    @Test func ipv4MappedPeerMatchesAnIPv4TrustedNetwork() {
        #expect(select(xff: "203.0.113.9", peer: "::ffff:10.0.0.2") == "203.0.113.0/24")
    }

    @Test func noAddressAtAllGivesNoNetwork() {
        #expect(select(peer: nil) == "")
        #expect(select(xff: "203.0.113.9", peer: nil) == "")
    }
}

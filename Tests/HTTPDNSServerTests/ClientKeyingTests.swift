import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// How the per-client limits tell clients apart: an IPv4 address each, an IPv6 one by its prefix.
@Suite struct ClientKeyingTests {
    @Test func anIPv6AddressStandsForItsSlash64ByDefault() {
        let keying = ClientKeying()
        #expect(keying.key(PeerAddress("2001:db8:1:2:aaaa:bbbb:cccc:dddd")!) == PeerAddress("2001:db8:1:2::")!)
        #expect(keying.key(PeerAddress("2001:db8:1:2::1")!) == keying.key(PeerAddress("2001:db8:1:2:ffff::9")!))
        #expect(keying.key(PeerAddress("2001:db8:1:2::1")!) != keying.key(PeerAddress("2001:db8:1:3::1")!))
        #expect(keying.id(PeerAddress("2001:db8:1:2::1")!) == keying.id(PeerAddress("2001:db8:1:2:ffff::9")!))
        #expect(keying.id(PeerAddress("2001:db8:1:2::1")!) != keying.id(PeerAddress("2001:db8:1:3::1")!))
    }

    @Test(arguments: [
        (48, "2001:db8:1:2:3:4:5:6", "2001:db8:1::"),
        (56, "2001:db8:1:2ff:3:4:5:6", "2001:db8:1:200::"),
        (60, "2001:db8:1:2ff:3:4:5:6", "2001:db8:1:2f0::"),
        (96, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4::"),
        (100, "2001:db8:1:2:3:4:ffff:6", "2001:db8:1:2:3:4:f000:0"),
        (128, "2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6"),
    ])
    func thePrefixLengthIsConfigurable(length: Int, address: String, key: String) {
        #expect(ClientKeying(ipv6PrefixLength: length).key(PeerAddress(address)!) == PeerAddress(key)!)
    }

    @Test func anIPv4AddressIsOneClientWhereverItAppears() {
        let keying = ClientKeying()
        #expect(keying.key(PeerAddress("192.0.2.7")!) == PeerAddress("192.0.2.7")!)
        #expect(keying.key(PeerAddress("192.0.2.7")!) != keying.key(PeerAddress("192.0.2.8")!))
        // An IPv4-mapped IPv6 address is its IPv4 client, not one /64 holding every IPv4 client.
        #expect(keying.key(PeerAddress("::ffff:192.0.2.7")!) == PeerAddress("192.0.2.7")!)
        #expect(keying.key(PeerAddress("::ffff:192.0.2.7")!) != keying.key(PeerAddress("::ffff:192.0.2.8")!))
    }
}

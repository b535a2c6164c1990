/// The records `TestUnbound` serves (zone `example.test.`), for tests to compare against.
public enum TestZone {
    /// Zone apex.
    public static let origin = "example.test"
    /// SOA minimum (negative TTL) of the zone, seconds.
    public static let soaMinimum: UInt32 = 45

    /// `www`: two A (TTL 300), one AAAA (TTL 300).
    public static let www = "www.example.test"
    public static let wwwV4 = ["127.0.0.11", "127.0.0.12"]
    public static let wwwV6 = ["::1"]
    public static let wwwTTL: UInt32 = 300

    /// `api` CNAME (TTL 60) → `mid` CNAME (TTL 120) → `www` (TTL 300): effective TTL 60.
    public static let cnameChain = "api.example.test"
    public static let cnameChainTTL: UInt32 = 60

    /// `v4only`: one A (TTL 300), no AAAA (NODATA for AAAA).
    public static let v4Only = "v4only.example.test"
    public static let v4OnlyV4 = ["127.0.0.21"]

    /// `v6only`: one AAAA (TTL 300), no A.
    public static let v6Only = "v6only.example.test"
    public static let v6OnlyV6 = ["fd00::22"]

    /// `short`: one A with TTL 5.
    public static let shortTTLName = "short.example.test"
    public static let shortTTLV4 = ["127.0.0.31"]

    /// `minute`: one A with TTL 60.
    public static let minuteTTLName = "minute.example.test"
    public static let minuteTTLV4 = ["127.0.0.41"]

    /// Wildcard `*.wild.example.test` A 127.0.0.51 (TTL 300): `unique()` names resolve to it.
    public static let wildV4 = ["127.0.0.51"]
    public static let wildV6 = ["fd00::51"]

    /// Wildcard `*.ttl2.example.test` A 127.0.0.72 with TTL 2: `uniqueTTL2()` names expire quickly.
    public static let ttl2V4 = ["127.0.0.72"]
    public static let ttl2: UInt32 = 2

    /// Wildcard `*.ttl3.example.test` A 127.0.0.73 with TTL 3: `uniqueTTL3()` names expire quickly.
    public static let ttl3V4 = ["127.0.0.73"]
    public static let ttl3: UInt32 = 3

    /// `text`: one TXT record (TTL 120), for the RFC 8484 forward path.
    public static let txtName = "text.example.test"
    public static let txtData = "\"httpdnsd test zone\""
    public static let txtTTL: UInt32 = 120

    /// The apex's MX record (TTL 600): `10 mail.example.test.`; `mail` has A 127.0.0.25.
    public static let mxData = "10 mail.example.test."
    public static let mxTTL: UInt32 = 600

    /// `loop`: A 127.0.0.1 only, so a client that resolves it through httpdnsd reaches a
    /// loopback server of the test (curl `--doh-url`).
    public static let loopbackName = "loop.example.test"

    /// `shop`: A 127.0.0.2 and 127.0.0.1, for a client that connects by IP (httpdns-curl): a
    /// test serves HTTPS on 127.0.0.1 only, so 127.0.0.2 refuses the connection.
    public static let shopName = "shop.example.test"
    public static let shopV4 = ["127.0.0.1", "127.0.0.2"]

    /// A fresh name under the TTL-2 wildcard, never asked before.
    public static func uniqueTTL2(_ label: String = "t") -> String {
        "\(label)-\(UInt64.random(in: 0...UInt64.max))".lowercased() + ".ttl2.example.test"
    }

    /// A fresh name under the TTL-3 wildcard, never asked before.
    public static func uniqueTTL3(_ label: String = "t") -> String {
        "\(label)-\(UInt64.random(in: 0...UInt64.max))".lowercased() + ".ttl3.example.test"
    }

    /// A fresh name under the wildcard, never asked before (so never cached).
    public static func unique(_ label: String = "n") -> String {
        "\(label)-\(UInt64.random(in: 0...UInt64.max))".lowercased() + ".wild.example.test"
    }

    /// A fresh name that does not exist (NXDOMAIN with the zone SOA).
    public static func nxdomain(_ label: String = "nx") -> String {
        "\(label)-\(UInt64.random(in: 0...UInt64.max)).nx.example.test"
    }

    /// A fresh name outside the test zone: unbound answers REFUSED (it never recurses).
    public static func refused(_ label: String = "out") -> String {
        "\(label)-\(UInt64.random(in: 0...UInt64.max)).example.com"
    }

    /// A name with more AAAA records than a 512-byte UDP response holds (about 730 bytes), fewer
    /// than 1232 bytes: truncated over UDP without EDNS, whole with it or over TCP.
    public static let bigName = "big.example.test"
    public static let bigV6 = (1...25).map { "fd00::b:\($0)" }

    /// Number of generated hosts `h0.bulk.example.test` … `h119.bulk.example.test`.
    public static let bulkCount = 120

    /// Bulk host `index`.
    public static func bulkHost(_ index: Int) -> String { "h\(index).bulk.example.test" }

    /// The single A address of bulk host `index` (`127.1.x.y`).
    public static func bulkV4(_ index: Int) -> String { "127.1.\(index / 250).\(index % 250 + 1)" }

    /// The zone file text.
    /// `cname.test.`, an unbound `local-zone static` (as many deployments configure unbound): each
    /// CNAME is answered alone. `api` → `www` (60 s, then 300 s), a loop, a chain of 12 links,
    /// and a CNAME to a name that does not exist.
    public static let staticCNAME = "api.cname.test"
    public static let staticCNAMETarget = "www.cname.test"
    public static let staticCNAMEV4 = ["127.0.0.81"]
    public static let staticCNAMETTL: UInt32 = 60
    public static let staticLoop = "loop1.cname.test"
    public static let staticLongChain = "c0.cname.test"
    public static let staticToNowhere = "dangling.cname.test"

    static func staticCNAMEData() -> [String] {
        var data = [
            "api.cname.test. 60 IN CNAME www.cname.test.",
            "www.cname.test. 300 IN A 127.0.0.81",
            "loop1.cname.test. 60 IN CNAME loop2.cname.test.",
            "loop2.cname.test. 60 IN CNAME loop1.cname.test.",
            "dangling.cname.test. 60 IN CNAME nowhere.cname.test.",
            "c12.cname.test. 60 IN A 127.0.0.82",
        ]
        for index in 0..<12 { data.append("c\(index).cname.test. 60 IN CNAME c\(index + 1).cname.test.") }
        return data
    }

    static func zoneFile() -> String {
        var lines = [
            "$ORIGIN example.test.",
            "$TTL 3600",
            "@ 3600 IN SOA ns.example.test. hostmaster.example.test. 1 3600 1200 604800 \(soaMinimum)",
            "@ 3600 IN NS ns.example.test.",
            "ns 3600 IN A 127.0.0.53",
            "@ 600 IN MX 10 mail.example.test.",
            "mail 300 IN A 127.0.0.25",
            "loop 300 IN A 127.0.0.1",
            "shop 300 IN A 127.0.0.2",
            "shop 300 IN A 127.0.0.1",
            "text 120 IN TXT \"httpdnsd test zone\"",
            "www 300 IN A 127.0.0.11",
            "www 300 IN A 127.0.0.12",
            "www 300 IN AAAA ::1",
            "api 60 IN CNAME mid.example.test.",
            "mid 120 IN CNAME www.example.test.",
            "v4only 300 IN A 127.0.0.21",
            "v6only 300 IN AAAA fd00::22",
            "short 5 IN A 127.0.0.31",
            "minute 60 IN A 127.0.0.41",
            "*.wild 300 IN A 127.0.0.51",
            "*.wild 300 IN AAAA fd00::51",
            "*.ttl2 2 IN A 127.0.0.72",
            "*.ttl3 3 IN A 127.0.0.73",
        ]
        for address in bigV6 { lines.append("big 300 IN AAAA \(address)") }
        for index in 0..<bulkCount {
            lines.append("h\(index).bulk 300 IN A \(bulkV4(index))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The mnemonics of DNS types (RFC 1035, RFC 3596, RFC 9460) and response codes (RFC 1035
/// §4.1.1, RFC 6895) that logs and streams name; others are written `TYPEn` (RFC 3597) and
/// `RCODEn`.
public enum DNSTypeNames {
    static let types: [UInt16: String] = [
        1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA", 33: "SRV", 64: "SVCB", 65: "HTTPS",
        255: "ANY",
    ]
    private static let numbers = Dictionary(uniqueKeysWithValues: types.map { ($0.value, $0.key) })

    /// The response codes 0-5, by value.
    public static let rcodes = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"]

    /// `A`, `AAAA`, ... or `TYPEn`.
    public static func name(_ type: UInt16) -> String { types[type] ?? "TYPE\(type)" }

    /// The type a mnemonic of `name` stands for, nil for another text.
    public static func number(_ name: String) -> UInt16? { numbers[name] }

    /// `NOERROR`, `NXDOMAIN`, ... or `RCODEn`.
    public static func rcodeName(_ rcode: UInt8) -> String {
        Int(rcode) < rcodes.count ? rcodes[Int(rcode)] : "RCODE\(rcode)"
    }
}

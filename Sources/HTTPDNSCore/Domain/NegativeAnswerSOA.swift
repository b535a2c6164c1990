/// The SOA record a negative answer (NXDOMAIN or NODATA) carried in its authority section: the
/// zone it came from and the SOA's RDATA, kept with the cached answer so that an RFC 8484 (or DoH
/// JSON) client gets it back, as RFC 2308 §3 asks, and can negative-cache the answer itself.
///
/// A class, so that a cache entry holds only a reference to it (nil for positive answers) and
/// the record lives out of line. Immutable. Names are presentation text with the final dot, as
/// libknot writes them (`knot_dname_to_str`: characters outside letters, digits, `-`, `_` and
/// `/` escaped), so they never hold a space; the wire layer reads and writes the record, this
/// type only carries it. The record's own TTL is not kept: the answer's remaining TTL is the
/// TTL it is sent with (RFC 2308 §5).
///
/// Used from the moment an upstream's negative answer is parsed until it is rendered again: in
/// the cache, the store and the Redis tier. Reading and writing DNS messages uses HTTPDNSWire's
/// `DNSSOARecord` (libknot's form), converted at the edges (HTTPDNSUpstream's parsers, the
/// RFC 8484 renderer).
public final class NegativeAnswerSOA: Sendable, Hashable, CustomStringConvertible {
    /// The owner name: the apex of the zone the answer came from.
    public let zone: String
    /// MNAME, the zone's primary server.
    public let primary: String
    /// RNAME, the zone's mailbox.
    public let mailbox: String
    public let serial: UInt32
    public let refresh: UInt32
    public let retry: UInt32
    public let expire: UInt32
    /// MINIMUM, the negative TTL the zone asks for (RFC 2308 §4).
    public let minimum: UInt32

    /// A record of checked parts; nil when a name is not a presentation name (`isName`).
    public init?(
        zone: String, primary: String, mailbox: String, serial: UInt32, refresh: UInt32, retry: UInt32, expire: UInt32, minimum: UInt32
    ) {
        guard Self.isName(zone), Self.isName(primary), Self.isName(mailbox) else { return nil }
        self.zone = zone
        self.primary = primary
        self.mailbox = mailbox
        self.serial = serial
        self.refresh = refresh
        self.retry = retry
        self.expire = expire
        self.minimum = minimum
    }

    /// The RDATA in presentation form, `<mname> <rname> <serial> <refresh> <retry> <expire>
    /// <minimum>` (RFC 1035 §5.1; the `data` of a DoH JSON record).
    public var data: String { "\(primary) \(mailbox) \(serial) \(refresh) \(retry) \(expire) \(minimum)" }

    /// The stored form, `<zone> <data>`: eight fields separated by single spaces.
    public var description: String { "\(zone) \(data)" }

    /// Reads the stored form (`description`); nil for anything else.
    public convenience init?(_ text: String) {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 8 else { return nil }
        var numbers: [UInt32] = []
        for field in fields[3...] {
            guard let number = UInt32(field) else { return nil }
            numbers.append(number)
        }
        self.init(
            zone: String(fields[0]), primary: String(fields[1]), mailbox: String(fields[2]), serial: numbers[0], refresh: numbers[1],
            retry: numbers[2], expire: numbers[3], minimum: numbers[4])
    }

    /// Whether `text` can be a name as libknot writes it: 1 to 1004 printable ASCII characters
    /// (`KNOT_DNAME_TXT_MAXLEN`), none a space, ending with the root's dot. Whether its labels
    /// fit is libknot's to say when the record is written.
    public static func isName(_ text: String) -> Bool {
        let utf8 = text.utf8
        return (1...1004).contains(utf8.count) && utf8.last == UInt8(ascii: ".") && utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    public static func == (lhs: NegativeAnswerSOA, rhs: NegativeAnswerSOA) -> Bool {
        lhs === rhs
            || (lhs.zone == rhs.zone && lhs.primary == rhs.primary && lhs.mailbox == rhs.mailbox && lhs.serial == rhs.serial
                && lhs.refresh == rhs.refresh && lhs.retry == rhs.retry && lhs.expire == rhs.expire && lhs.minimum == rhs.minimum)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(zone)
        hasher.combine(serial)
    }
}

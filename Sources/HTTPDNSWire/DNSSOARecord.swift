import CKnot

/// An SOA record's owner and RDATA (RFC 1035 §3.3.13), names as presentation text with the
/// final dot (`knot_dname_to_str`). Read from a reply's authority section (`DNSReplySummary`) or
/// from presentation text (a DoH JSON `Authority` record), written into a response's authority
/// section (`DNSResponseWriter`). The record's TTL is the writer's to choose.
///
/// The wire layer's own form of the record, used only while a DNS message is read or written;
/// between the two, a cached negative answer carries HTTPDNSCore's `NegativeAnswerSOA`, which
/// holds the same fields for modules that have no libknot (the cache, the store, Redis).
public struct DNSSOARecord: Sendable, Equatable {
    /// The owner: the apex of the zone.
    public var zone: String
    /// MNAME.
    public var primary: String
    /// RNAME.
    public var mailbox: String
    public var serial: UInt32
    public var refresh: UInt32
    public var retry: UInt32
    public var expire: UInt32
    public var minimum: UInt32

    public init(
        zone: String, primary: String, mailbox: String, serial: UInt32, refresh: UInt32, retry: UInt32, expire: UInt32, minimum: UInt32
    ) {
        self.zone = zone
        self.primary = primary
        self.mailbox = mailbox
        self.serial = serial
        self.refresh = refresh
        self.retry = retry
        self.expire = expire
        self.minimum = minimum
    }

    /// Reads the presentation form of the RDATA, `mname rname serial refresh retry expire
    /// minimum` (whitespace-separated), owned by `zone`. Each name is read and written back by
    /// libknot (`knot_dname_from_str`, `knot_dname_to_str`), so it comes out in the form libknot
    /// writes whatever form it came in. `.malformed` for anything else.
    public init(zone: String, data: String) throws(DNSMessageError) {
        let fields = data.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 7 else { throw DNSMessageError(.malformed, "SOA data has \(fields.count) fields, not 7") }
        var numbers: [UInt32] = []
        for field in fields[2...] {
            guard let number = UInt32(field) else { throw DNSMessageError(.malformed, "SOA data field '\(field)' is not a 32-bit number") }
            numbers.append(number)
        }
        self.init(
            zone: try Self.canonical(zone), primary: try Self.canonical(String(fields[0])), mailbox: try Self.canonical(String(fields[1])),
            serial: numbers[0], refresh: numbers[1], retry: numbers[2], expire: numbers[3], minimum: numbers[4])
    }

    /// The SOA RRset `rrset` of a parsed packet (its first record): names by `knot_dname_to_str`,
    /// numbers by `knot_soa_*`. `.malformed` when a name cannot be written as text.
    init(_ rrset: UnsafePointer<knot_rrset_t>) throws(DNSMessageError) {
        let rdata = chttpdns_knot_rdata_at(rrset, 0)
        self.init(
            zone: try DNSName.text(rrset.pointee.owner), primary: try DNSName.text(knot_soa_primary(rdata)),
            mailbox: try DNSName.text(knot_soa_mailbox(rdata)), serial: knot_soa_serial(rdata), refresh: knot_soa_refresh(rdata),
            retry: knot_soa_retry(rdata), expire: knot_soa_expire(rdata), minimum: knot_soa_minimum(rdata))
    }

    /// The owner and RDATA in wire form: the names by `knot_dname_from_str`, the numbers by
    /// `knot_wire_write_u32`. `.malformed` when a name is not one libknot reads.
    func wire() throws(DNSMessageError) -> (owner: [UInt8], rdata: [UInt8]) {
        let owner = try DNSName.wire(zone)
        var rdata = try DNSName.wire(primary) + DNSName.wire(mailbox)
        let names = rdata.count
        rdata += [UInt8](repeating: 0, count: 20)
        rdata.withUnsafeMutableBufferPointer { buffer in
            let numbers = buffer.baseAddress! + names
            for (index, value) in [serial, refresh, retry, expire, minimum].enumerated() {
                knot_wire_write_u32(numbers + 4 * index, value)
            }
        }
        return (owner, rdata)
    }

    /// `text` read and written back by libknot.
    static func canonical(_ text: String) throws(DNSMessageError) -> String {
        let name = try DNSName.wire(text)
        return try name.withUnsafeBufferPointer { (buffer) throws(DNSMessageError) in try DNSName.text(buffer.baseAddress) }
    }
}

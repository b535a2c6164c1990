import Foundation
import HTTPDNSCore

/// How one answer is kept in Redis: a line of text,
/// `1 <storedAt> <originTTL> <nxdomain 0|1> <origin> <address,address,...>` (version 1; the
/// address list may be empty), or, for a negative answer that keeps its zone's SOA, version 2:
/// the same six fields with `2` first, then the SOA's eight (`NegativeAnswerSOA`'s text form, `<zone>
/// <mname> <rname> <serial> <refresh> <retry> <expire> <minimum>`). Every other answer is still
/// written as version 1, which a build from before version 2 reads; such a build takes a
/// version-2 value for a miss. What another replica wrote is checked whole before it is used:
/// anything else is a miss.
enum SharedAnswerCodec {
    /// Written as bytes, field by field: every miss of a replica stores one (Foundation's
    /// `String(format:)` for the time alone cost more than the rest of the store together).
    static func encode(_ entry: CacheEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.append(entry.soa == nil ? UInt8(ascii: "1") : UInt8(ascii: "2"))
        bytes.append(UInt8(ascii: " "))
        appendMilliseconds(entry.storedAt, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(Int(entry.originTTL))
        bytes.append(UInt8(ascii: " "))
        bytes.append(entry.nxdomain ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: entry.origin.rawValue.utf8)
        bytes.append(UInt8(ascii: " "))
        entry.addressList.appendCommaSeparated(to: &bytes)
        if let soa = entry.soa { bytes.append(contentsOf: " \(soa)".utf8) }
        return bytes
    }

    /// `seconds` with three decimals, rounded to the millisecond, as `%.3f` writes it (a time
    /// beyond what 64 bits of milliseconds hold, which no clock gives, goes through `%.3f` itself).
    static func appendMilliseconds(_ seconds: Double, to bytes: inout [UInt8]) {
        guard let total = Int64(exactly: (seconds.magnitude * 1000).rounded()) else {
            bytes.append(contentsOf: String(format: "%.3f", seconds).utf8)
            return
        }
        if seconds < 0 && total != 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.appendDecimal(Int(total / 1000))
        let fraction = total % 1000
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        bytes.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        bytes.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }

    static func decode(_ bytes: [UInt8]) -> CacheEntry? {
        guard bytes.count <= 65_536 else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard (fields.count == 6 && fields[0] == "1") || (fields.count == 14 && fields[0] == "2"),
            let storedAt = Double(fields[1]), storedAt.isFinite, storedAt > 0,
            let ttl = UInt32(fields[2]),
            fields[3] == "0" || fields[3] == "1",
            let origin = AnswerSource(rawValue: String(fields[4])), origin == .upstream || origin == .localdns
        else { return nil }
        let addresses = fields[5].isEmpty ? [] : fields[5].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard addresses.allSatisfy({ IPAddress($0) != nil }) else { return nil }
        var soa: NegativeAnswerSOA?
        if fields.count == 14 {
            // Only a negative answer keeps one.
            guard addresses.isEmpty, let record = NegativeAnswerSOA(fields[6...].joined(separator: " ")) else { return nil }
            soa = record
        }
        return CacheEntry(addresses: addresses, originTTL: ttl, storedAt: storedAt, nxdomain: fields[3] == "1", origin: origin, soa: soa)
    }
}

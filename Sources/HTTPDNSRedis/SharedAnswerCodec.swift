import Foundation
import HTTPDNSCore

/// How one answer is kept in Redis: a line of text,
/// `1 <storedAt> <originTTL> <nxdomain 0|1> <origin> <address,address,...>` (version 1; the
/// address list may be empty). What another replica wrote is checked whole before it is used:
/// anything else is a miss.
enum SharedAnswerCodec {
    static func encode(_ entry: CacheEntry) -> [UInt8] {
        let storedAt = String(format: "%.3f", entry.storedAt)
        let line = "1 \(storedAt) \(entry.originTTL) \(entry.nxdomain ? 1 : 0) \(entry.origin.rawValue) \(entry.addresses.joined(separator: ","))"
        return Array(line.utf8)
    }

    static func decode(_ bytes: [UInt8]) -> CacheEntry? {
        guard bytes.count <= 65_536 else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0] == "1",
            let storedAt = Double(fields[1]), storedAt.isFinite, storedAt > 0,
            let ttl = UInt32(fields[2]),
            fields[3] == "0" || fields[3] == "1",
            let origin = AnswerSource(rawValue: String(fields[4])), origin == .upstream || origin == .localdns
        else { return nil }
        let addresses = fields[5].isEmpty ? [] : fields[5].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard addresses.allSatisfy({ IPAddress($0) != nil }) else { return nil }
        return CacheEntry(addresses: addresses, originTTL: ttl, storedAt: storedAt, nxdomain: fields[3] == "1", origin: origin)
    }
}

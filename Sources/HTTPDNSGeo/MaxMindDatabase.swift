import CMaxMindDB
import HTTPDNSCore

/// A MaxMind DB file that could not be opened: the libmaxminddb error (`MMDB_strerror`).
public struct GeoDatabaseError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var message: String

    init(path: String, code: Int32) {
        self.path = path
        self.code = code
        message = String(cString: MMDB_strerror(code))
    }

    public var description: String { "\(path): \(message) (libmaxminddb error \(code))" }
}

/// One MaxMind DB file (GeoLite2 or DB-IP, City, Country or ASN shaped), memory-mapped by
/// `MMDB_open` and read-only from then on, so lookups from any thread need no lock (as
/// libmaxminddb documents for a database opened with `MMDB_MODE_MMAP`); closed (`MMDB_close`)
/// when the last reference goes.
final class MaxMindDatabase: @unchecked Sendable {
    private let database: UnsafeMutablePointer<MMDB_s>
    let path: String

    /// `MMDB_open`; throws its error for a missing, unreadable or malformed file.
    init(path: String) throws(GeoDatabaseError) {
        database = .allocate(capacity: 1)
        let status = MMDB_open(path, UInt32(MMDB_MODE_MMAP), database)
        guard status == MMDB_SUCCESS else {
            database.deallocate()
            throw GeoDatabaseError(path: path, code: status)
        }
        self.path = path
    }

    deinit {
        MMDB_close(database)
        database.deallocate()
    }

    /// Runs `body` on the entry of `address`'s network; nil when the file has none (or an IPv6
    /// address is asked of an IPv4-only file).
    func withEntry<R>(_ address: IPAddress, _ body: (UnsafeMutablePointer<MMDB_entry_s>) -> R) -> R? {
        var entry = MMDB_entry_s()
        var found: Int32 = 0
        let status = address.withUnsafeBytes { bytes in
            chttpdns_mmdb_lookup(database, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bytes.count), &entry, &found)
        }
        guard status == MMDB_SUCCESS, found != 0 else { return nil }
        return body(&entry)
    }

    /// `country.iso_code` and each `subdivisions[i].iso_code` as `CC-SUB` (ISO 3166-2), upper case.
    func location(_ address: IPAddress) -> (country: String?, regions: [String]) {
        withEntry(address) { entry in
            let country = Self.text { chttpdns_mmdb_country(entry, $0, $1) }
            var regions: [String] = []
            if let country {
                var index: Int32 = 0
                while index < 4, let code = Self.text({ chttpdns_mmdb_subdivision(entry, index, $0, $1) }) {
                    regions.append("\(country)-\(code)")
                    index += 1
                }
            }
            return (country, regions)
        } ?? (nil, [])
    }

    /// `autonomous_system_number`.
    func asn(_ address: IPAddress) -> UInt32? {
        withEntry(address) { entry in
            var number: UInt32 = 0
            return chttpdns_mmdb_asn(entry, &number) == 0 ? number : nil
        } ?? nil
    }

    /// A short string a shim function copies into a buffer on the stack, upper-cased.
    private static func text(_ read: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard read(buffer.baseAddress!, buffer.count) > 0 else { return nil }
            return String(cString: buffer.baseAddress!).uppercased()
        }
    }
}

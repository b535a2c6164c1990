import HTTPDNSCore
import Synchronization

/// The offset between an upstream's clock and ours, learnt from the HTTP `Date` header of its
/// responses, so signed timestamps survive local clock skew (the official C SDK does the same).
final class ServerClockOffset: Sendable {
    private let locked_offset = Mutex<Double>(0)

    /// Seconds to add to the local clock to get the server's clock (0 until a Date was seen).
    var seconds: Double { locked_offset.withLock { $0 } }

    /// Learns from a response's `Date` header received at local time `now`. Offsets under two
    /// seconds are treated as zero: the header has one-second resolution.
    func learn(dateHeader: String?, now: Timestamp) {
        guard let dateHeader, let server = Self.parseHTTPDate(dateHeader) else { return }
        let offset = server - now.rounded(.down)
        locked_offset.withLock { $0 = abs(offset) < 2 ? 0 : offset }
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7, the form every
    /// current server sends) into Unix seconds; nil for anything else. Read byte by byte at
    /// fixed places: this runs for every upstream response.
    static func parseHTTPDate(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { bytes -> Double? in
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
                bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
                bytes[26] == UInt8(ascii: "G"), bytes[27] == UInt8(ascii: "M"), bytes[28] == UInt8(ascii: "T"),
                let day = decimal(bytes, 5, 2), let year = decimal(bytes, 12, 4), let hour = decimal(bytes, 17, 2),
                let minute = decimal(bytes, 20, 2), let second = decimal(bytes, 23, 2),
                let month = months.firstIndex(where: { $0.0 == bytes[8] && $0.1 == bytes[9] && $0.2 == bytes[10] }),
                (1...31).contains(day), hour < 24, minute < 60, second <= 60
            else { return nil }
            return Double(unixSeconds(year: year, month: month + 1, day: day) + hour * 3600 + minute * 60 + second)
        }
    }

    /// The `count` decimal digits at `start`, or nil when one is not a digit.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<start + count] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Seconds from 1970-01-01 to the civil date's midnight (Howard Hinnant's days-from-civil).
    private static func unixSeconds(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return (era * 146_097 + dayOfEra - 719_468) * 86_400
    }

    private static let months: [(UInt8, UInt8, UInt8)] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { name in
        let bytes = Array(name.utf8)
        return (bytes[0], bytes[1], bytes[2])
    }
}

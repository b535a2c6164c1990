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

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into Unix seconds.
    static func parseHTTPDate(_ text: String) -> Double? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT",
            let day = Int(fields[1]), let year = Int(fields[3]),
            let month = months.firstIndex(of: String(fields[2])).map({ $0 + 1 })
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0..<24).contains(clock[0]),
            (0..<60).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2])
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

import Synchronization

/// Lets one message per key through every `interval` seconds and counts the ones held back, so a
/// dead upstream is reported without writing a line per request.
public final class LogThrottle: Sendable {
    private struct Slot: Sendable {
        var lastLogged: Timestamp
        var suppressed: Int
    }

    private let slots = Mutex<[String: Slot]>([:])
    public let interval: Double

    public init(interval: Double) {
        self.interval = interval
    }

    /// Nil when the message for `key` is to be held back; else how many were held back since the
    /// last one that went through.
    public func admit(_ key: String, now: Timestamp) -> Int? {
        slots.withLock { table in
            if var slot = table[key], now - slot.lastLogged < interval {
                slot.suppressed += 1
                table[key] = slot
                return nil
            }
            let suppressed = table[key]?.suppressed ?? 0
            table[key] = Slot(lastLogged: now, suppressed: 0)
            return suppressed
        }
    }
}

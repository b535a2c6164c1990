/// The logic of the query log's queue: at most `capacity` entries waiting for the writer; an
/// entry offered while it is full is dropped and counted. No lock, no clock (`QueryLogQueue`
/// is its locked shell).
struct QueryLogBuffer {
    let capacity: Int
    private(set) var entries: [QueryLogEntry] = []
    private(set) var dropped = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Queues `entry`, or drops and counts it when `capacity` entries wait; true when queued.
    mutating func offer(_ entry: QueryLogEntry) -> Bool {
        guard entries.count < capacity else {
            dropped += 1
            return false
        }
        entries.append(entry)
        return true
    }

    /// Every waiting entry, oldest first; the buffer is left with `fresh`, an empty array
    /// whose capacity the caller reserved (outside the lock), so that offers do not grow it.
    mutating func drain(into fresh: inout [QueryLogEntry]) {
        swap(&entries, &fresh)
    }
}

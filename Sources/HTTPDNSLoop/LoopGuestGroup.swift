/// Several guests riding on one host loop as one (the upstream HTTP/1.1 client and the Redis
/// tier's connection of an HTTP thread): idle when each is, a descriptor handled by the guest that
/// owns it, a turn for each that is not idle, the earliest of their next turns.
package final class LoopGuestGroup: LoopGuest {
    private let guests: [any LoopGuest]

    package init(_ guests: [any LoopGuest]) {
        self.guests = guests
    }

    package var isIdle: Bool {
        for guest in guests where !guest.isIdle { return false }
        return true
    }

    package func handle(_ ready: EpollSet.Readiness) -> Bool {
        for guest in guests where guest.handle(ready) { return true }
        return false
    }

    package var hasPending: Bool {
        for guest in guests where guest.hasPending { return true }
        return false
    }

    /// A guest's completions may give work to a guest turned before it (a Redis reply starts an
    /// upstream request, an upstream answer is stored in Redis): then the group is due again now.
    package func turn(now: Int64) -> Int64? {
        var next: Int64?
        for guest in guests where !guest.isIdle {
            guard let due = guest.turn(now: now) else { continue }
            next = min(next ?? due, due)
        }
        return hasPending ? now : next
    }

    package func shutdown() {
        for guest in guests { guest.shutdown() }
    }
}

@available(*, unavailable)
extension LoopGuestGroup: Sendable {}

import HTTPDNSCore

/// The CNAME links of one reply, and where they lead from the asked name: what both reply
/// parsers (DoH JSON, RFC 8484) report when a reply ends in a CNAME without addresses.
struct CNAMEChain {
    private var links: [HostName: (target: HostName, ttl: UInt32?)] = [:]
    private(set) var firstOwner: HostName?

    /// Adds `owner CNAME target`; a second CNAME for the same owner (invalid) is ignored.
    mutating func add(owner: HostName, target: HostName, ttl: UInt32?) {
        if firstOwner == nil { firstOwner = owner }
        if links[owner] == nil { links[owner] = (target, ttl) }
    }

    /// The last name reached from `start` (stopping before a name already visited) and the
    /// minimum TTL over the links taken; nil when `start` has no CNAME here. A link back to
    /// `start` itself gives its target, so the caller's loop detection sees the loop.
    func end(from start: HostName) -> (target: HostName, ttl: UInt32?)? {
        guard let first = links[start] else { return nil }
        var current = start
        var ttl: UInt32?
        var seen: Set<HostName> = [start]
        while let link = links[current], seen.insert(link.target).inserted {
            current = link.target
            if let linkTTL = link.ttl { ttl = min(ttl ?? linkTTL, linkTTL) }
        }
        return current == start ? (first.target, first.ttl) : (current, ttl)
    }
}

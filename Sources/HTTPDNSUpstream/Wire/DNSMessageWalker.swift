/// A minimal walk over a DNS message's sections, only to find the SOA in the authority section
/// of a negative reply (RFC 2308). Names are skipped, never decompressed.
struct DNSMessageWalker {
    private let bytes: [UInt8]
    private var offset = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// What the authority section says about negative caching.
    struct NegativeTTL {
        /// min(SOA TTL, SOA MINIMUM) of the first SOA, nil when the section has none.
        var ttl: UInt32?
    }

    /// The negative TTL of a reply (RFC 2308), or nil when the message is malformed.
    static func negativeTTL(_ message: [UInt8]) -> NegativeTTL? {
        var walker = DNSMessageWalker(message)
        guard let questions = walker.u16(at: 4), let answers = walker.u16(at: 6), let authorities = walker.u16(at: 8) else {
            return nil
        }
        walker.offset = 12
        for _ in 0..<questions {
            guard walker.skipName(), walker.skip(4) else { return nil }
        }
        for _ in 0..<answers {
            guard walker.skipRecord() != nil else { return nil }
        }
        for _ in 0..<authorities {
            guard walker.skipName(), let type = walker.readU16(), walker.skip(2), let ttl = walker.readU32(),
                let length = walker.readU16()
            else { return nil }
            let end = walker.offset + Int(length)
            guard end <= message.count else { return nil }
            if type == 6 {
                guard walker.skipName(), walker.skipName(), walker.skip(16), let minimum = walker.readU32(),
                    walker.offset <= end
                else { return nil }
                return NegativeTTL(ttl: min(ttl, minimum))
            }
            walker.offset = end
        }
        return NegativeTTL(ttl: nil)
    }

    /// Skips one resource record; returns its type, or nil past the end.
    private mutating func skipRecord() -> UInt16? {
        guard skipName(), let type = readU16(), skip(6), let length = readU16(), skip(Int(length)) else { return nil }
        return type
    }

    /// Skips a possibly compressed name: labels up to a zero byte or a 2-byte pointer.
    private mutating func skipName() -> Bool {
        while offset < bytes.count {
            let length = bytes[offset]
            switch length & 0xC0 {
            case 0x00:
                offset += 1
                if length == 0 { return true }
                guard skip(Int(length)) else { return false }
            case 0xC0:
                return skip(2)
            default:
                return false
            }
        }
        return false
    }

    private mutating func skip(_ count: Int) -> Bool {
        guard offset + count <= bytes.count else { return false }
        offset += count
        return true
    }

    private func u16(at index: Int) -> UInt16? {
        guard index + 2 <= bytes.count else { return nil }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    private mutating func readU16() -> UInt16? {
        guard let value = u16(at: offset) else { return nil }
        offset += 2
        return value
    }

    private mutating func readU32() -> UInt32? {
        guard let high = u16(at: offset), let low = u16(at: offset + 2) else { return nil }
        offset += 4
        return UInt32(high) << 16 | UInt32(low)
    }
}

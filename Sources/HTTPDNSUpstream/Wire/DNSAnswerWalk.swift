import HTTPDNSCore

/// The addresses a DNS reply gives its question: the records of the asked type owned by the
/// question's name or by the end of the CNAME chain that starts there, in the answer section's
/// order, each TTL capped by the TTLs of the CNAME links before it (so the smallest is the
/// answer's TTL). Reads the message in place: names are compared where they lie, compression
/// pointers followed, nothing allocated for up to three IPv4 addresses (`AddressList` packs
/// them). Pure.
struct DNSAnswerWalk {
    /// The addresses found, at most `maximumAddresses`.
    var addresses = AddressList([])
    /// The smallest TTL over those records (CNAME links included); nil without addresses.
    var ttl: UInt32?

    /// Why a message could not be read: the offset and what was wrong there.
    struct Malformed: Error {
        var message: String
    }

    /// Walks `message` for records of `family`. Throws on a message cut short, a name that
    /// loops or points outside the message, or an address record of the wrong length.
    static func walk(_ message: UnsafeBufferPointer<UInt8>, family: RecordFamily, maximumAddresses: Int) throws(Malformed) -> DNSAnswerWalk
    {
        let reader = Reader(bytes: message)
        guard message.count >= 12 else { throw Malformed(message: "shorter than a header") }
        let questions = reader.u16(4)
        let answers = reader.u16(6)
        guard questions == 1 else { throw Malformed(message: "\(questions) questions, not 1") }
        // The name the chain has reached; it starts at the question's.
        var current = 12
        var offset = try reader.skipName(at: 12) + 4
        guard offset <= message.count else { throw Malformed(message: "question cut short") }
        let wanted: UInt16 = family == .a ? 1 : 28
        let length = family == .a ? 4 : 16
        var result = DNSAnswerWalk()
        var chainTTL = UInt32.max
        for _ in 0..<answers {
            let owner = offset
            offset = try reader.skipName(at: offset)
            guard offset + 10 <= message.count else { throw Malformed(message: "answer record cut short") }
            let type = reader.u16(offset), recordClass = reader.u16(offset + 2)
            let ttl = UInt32(reader.u16(offset + 4)) << 16 | UInt32(reader.u16(offset + 6))
            let dataLength = Int(reader.u16(offset + 8))
            let data = offset + 10
            offset = data + dataLength
            guard offset <= message.count else { throw Malformed(message: "answer data cut short") }
            guard recordClass == 1, type == wanted || type == 5, try reader.sameName(owner, current) else { continue }
            if type == 5 {
                guard try reader.skipName(at: data) <= offset else { throw Malformed(message: "CNAME target runs past its record") }
                current = data
                chainTTL = min(chainTTL, ttl)
                continue
            }
            guard dataLength == length else { throw Malformed(message: "address record of \(dataLength) bytes") }
            guard result.addresses.count < maximumAddresses,
                let address = IPAddress(
                    family: family, rawBytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: message[data..<offset])))
            else { continue }
            result.addresses.append(address)
            let capped = min(ttl, chainTTL)
            result.ttl = min(result.ttl ?? capped, capped)
        }
        return result
    }

    /// Bounds-checked reads of the message.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        /// More pointer hops than this in one name is a loop.
        static let maximumHops = 64

        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) }

        /// What a name holds at `position`: a label (where its bytes start and how many), the
        /// name's end, or a pointer to where the rest of it is. Every check of a name's bytes is here.
        private enum Piece {
            case label(start: Int, count: Int)
            case end
            case pointer(to: Int)
        }

        private func piece(at position: Int) throws(Malformed) -> Piece {
            guard position < bytes.count else { throw Malformed(message: "name runs past the message") }
            let length = Int(bytes[position])
            switch length & 0xC0 {
            case 0xC0:
                guard position + 1 < bytes.count else { throw Malformed(message: "pointer cut short") }
                return .pointer(to: (length & 0x3F) << 8 | Int(bytes[position + 1]))
            case 0:
                if length == 0 { return .end }
                guard position + 1 + length <= bytes.count else { throw Malformed(message: "label runs past the message") }
                return .label(start: position + 1, count: length)
            default:
                throw Malformed(message: "label type \(length >> 6) in a name")
            }
        }

        /// The offset just past the name at `offset` (a pointer ends it in two bytes).
        func skipName(at offset: Int) throws(Malformed) -> Int {
            var position = offset
            while true {
                switch try piece(at: position) {
                case .label(let start, let count): position = start + count
                case .end: return position + 1
                case .pointer: return position + 2
                }
            }
        }

        /// The next label of a name: where its bytes start and how many, following pointers;
        /// count 0 at the end of the name.
        private func label(at offset: Int, hops: inout Int) throws(Malformed) -> (start: Int, count: Int) {
            var position = offset
            while true {
                switch try piece(at: position) {
                case .label(let start, let count): return (start, count)
                case .end: return (position + 1, 0)
                case .pointer(let target):
                    hops += 1
                    guard hops <= Self.maximumHops else { throw Malformed(message: "name pointers loop") }
                    position = target
                }
            }
        }

        /// Whether the names at `first` and `second` are the same (ASCII case-insensitive). Both
        /// names are walked to their end, so a malformed one throws whatever the other is; labels
        /// at the same offset (an owner that points at the question) are not compared byte by
        /// byte, and bytes equal as they are (the usual case) are not folded.
        func sameName(_ first: Int, _ second: Int) throws(Malformed) -> Bool {
            var a = first, b = second
            var hopsA = 0, hopsB = 0
            while true {
                let left = try label(at: a, hops: &hopsA)
                let right = try label(at: b, hops: &hopsB)
                guard left.count == right.count else { return false }
                if left.count == 0 { return true }
                if left.start != right.start {
                    for index in 0..<left.count {
                        let x = bytes[left.start + index], y = bytes[right.start + index]
                        if x != y && Self.folded(x) != Self.folded(y) { return false }
                    }
                }
                a = left.start + left.count
                b = right.start + right.count
            }
        }

        private static func folded(_ byte: UInt8) -> UInt8 {
            byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
        }
    }
}

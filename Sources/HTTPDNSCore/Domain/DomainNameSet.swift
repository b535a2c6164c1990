/// A set of host names matched by hashing, from a request's bytes without allocating: each name
/// and each of its parent suffixes is one hash lookup, whatever the size of the set. Names are
/// kept in canonical form (lower case, no trailing dot); a name looked up is compared without
/// regard to ASCII case, and one trailing dot is ignored.
struct DomainNameSet: Sendable {
    /// One name in the table: where its bytes lie in `bytes`, and its hash. `length` 0 is an empty slot.
    private struct Slot: Sendable {
        var hash: UInt32 = 0
        var start: UInt32 = 0
        var length: UInt16 = 0
    }

    /// The names' bytes, one after the other.
    private var bytes: [UInt8] = []
    /// Open addressing with linear probing; a power of two at least twice the count of names.
    private var slots: [Slot] = []
    private(set) var count = 0

    init() {}

    /// The set of `names` (each a valid `HostName`, so never empty and at most 253 bytes).
    init(_ names: [HostName]) {
        guard !names.isEmpty else { return }
        var capacity = 8
        while capacity < names.count * 2 { capacity *= 2 }
        slots = Array(repeating: Slot(), count: capacity)
        for name in names {
            var value = name.value
            value.withUTF8 { insert(UnsafeRawBufferPointer($0)) }
        }
    }

    private mutating func insert(_ name: UnsafeRawBufferPointer) {
        guard !contains(name) else { return }
        let hash = Self.hash(name)
        var index = Int(hash) & (slots.count - 1)
        while slots[index].length != 0 { index = (index + 1) & (slots.count - 1) }
        slots[index] = Slot(hash: hash, start: UInt32(bytes.count), length: UInt16(name.count))
        bytes.append(contentsOf: name)
        count += 1
    }

    /// True when `name` (any ASCII case, one trailing dot allowed) is in the set.
    func contains(_ name: UnsafeRawBufferPointer) -> Bool {
        guard count > 0 else { return false }
        let name = Self.withoutTrailingDot(name)
        guard !name.isEmpty else { return false }
        let hash = Self.hash(name)
        let mask = slots.count - 1
        return slots.withUnsafeBufferPointer { slots in
            bytes.withUnsafeBytes { stored in
                var index = Int(hash) & mask
                while slots[index].length != 0 {
                    let slot = slots[index]
                    if slot.hash == hash && Int(slot.length) == name.count {
                        let start = Int(slot.start)
                        if Self.equalsLowered(name, UnsafeRawBufferPointer(rebasing: stored[start..<start + name.count])) { return true }
                    }
                    index = (index + 1) & mask
                }
                return false
            }
        }
    }

    /// True when a proper parent suffix of `name` is in the set: `a.b.example.com` for
    /// `b.example.com` or `example.com`, never `example.com` itself. One lookup per dot.
    func containsParent(of name: UnsafeRawBufferPointer) -> Bool {
        guard count > 0 else { return false }
        let name = Self.withoutTrailingDot(name)
        var index = 0
        while index < name.count {
            if name[index] == UInt8(ascii: "."), index + 1 < name.count,
                contains(UnsafeRawBufferPointer(rebasing: name[(index + 1)...]))
            {
                return true
            }
            index += 1
        }
        return false
    }

    private static func withoutTrailingDot(_ name: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        name.last == UInt8(ascii: ".") ? UnsafeRawBufferPointer(rebasing: name.dropLast()) : name
    }

    /// FNV-1a over the lower-cased bytes.
    private static func hash(_ name: UnsafeRawBufferPointer) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in name {
            hash = (hash ^ UInt32(lowered(byte))) &* 16_777_619
        }
        return hash
    }

    /// `name` lower-cased equals `stored` (already lower case); same lengths.
    private static func equalsLowered(_ name: UnsafeRawBufferPointer, _ stored: UnsafeRawBufferPointer) -> Bool {
        for index in 0..<name.count where lowered(name[index]) != stored[index] { return false }
        return true
    }

    @inline(__always)
    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

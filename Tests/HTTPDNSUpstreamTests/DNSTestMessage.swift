/// Hand-assembles DNS reply messages for parser tests (uncompressed names, class IN).
struct DNSTestMessage {
    var rcode: UInt8 = 0
    var isReply = true
    var question: (name: String, type: UInt16) = ("www.example.test", 1)
    var answers: [(name: String, type: UInt16, ttl: UInt32, data: [UInt8])] = []
    var authority: [(name: String, type: UInt16, ttl: UInt32, data: [UInt8])] = []

    static func name(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for label in text.split(separator: ".") {
            bytes.append(UInt8(label.utf8.count))
            bytes += Array(label.utf8)
        }
        return bytes + [0]
    }

    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func u32(_ value: UInt32) -> [UInt8] { u16(UInt16(value >> 16)) + u16(UInt16(value & 0xFFFF)) }

    /// SOA RDATA with the given MINIMUM.
    static func soa(minimum: UInt32) -> [UInt8] {
        name("ns.example.test") + name("admin.example.test") + u32(1) + u32(3600) + u32(600) + u32(86400) + u32(minimum)
    }

    var bytes: [UInt8] {
        var out: [UInt8] = [0, 0, isReply ? 0x81 : 0x01, 0x80 | rcode]
        out += Self.u16(1) + Self.u16(UInt16(answers.count)) + Self.u16(UInt16(authority.count)) + Self.u16(0)
        out += Self.name(question.name) + Self.u16(question.type) + Self.u16(1)
        for record in answers + authority {
            out += Self.name(record.name) + Self.u16(record.type) + Self.u16(1) + Self.u32(record.ttl)
            out += Self.u16(UInt16(record.data.count)) + record.data
        }
        return out
    }
}

/// Converts a hex dump (as printed by a capture) to bytes.
func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

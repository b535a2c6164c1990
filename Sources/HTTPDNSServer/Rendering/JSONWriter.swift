import HTTPDNSCore

/// Appends JSON to a byte buffer without an encoder: the hot path renders answers with this.
/// The caller writes structure (`{`, `,`, keys) in order; strings are escaped.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// True when `text` is written as it is between quotes (no `"`, `\` or control character).
    static func needsNoEscaping(_ text: String) -> Bool {
        !text.utf8.contains { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }
    }

    /// A JSON string literal with quotes; escapes `"`, `\` and control characters.
    /// Text that needs no escaping (host names, addresses: the common case) is copied in one go.
    public mutating func string(_ text: String) {
        var text = text
        let copied = text.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !copied { escapedString(text) }
    }

    private mutating func escapedString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [92, 110])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [92, 114])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [92, 116])
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"key":` (the key is written as given: callers pass literal, safe keys).
    public mutating func key(_ key: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A decimal integer, written digit by digit (no intermediate `String`).
    public mutating func number<T: BinaryInteger>(_ value: T) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            number(value.magnitude)
            return
        }
        var magnitude = UInt64(value)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(24 - count)...])
        }
    }

    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    public mutating func stringArray(_ values: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// The addresses as a JSON array of strings; packed IPv4 addresses are formatted straight
    /// into the buffer.
    public mutating func addressArray(_ list: AddressList) {
        guard let packed = list.packedIPv4 else {
            stringArray(list.strings)
            return
        }
        bytes.append(UInt8(ascii: "["))
        ipv4String(packed.first)
        if packed.count > 1 {
            bytes.append(UInt8(ascii: ","))
            ipv4String(packed.second)
        }
        if packed.count > 2 {
            bytes.append(UInt8(ascii: ","))
            ipv4String(packed.third)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"a.b.c.d"` for an IPv4 address held as a number (first octet in the high byte).
    private mutating func ipv4String(_ address: UInt32) {
        bytes.append(UInt8(ascii: "\""))
        decimalOctet(UInt8(truncatingIfNeeded: address >> 24))
        bytes.append(UInt8(ascii: "."))
        decimalOctet(UInt8(truncatingIfNeeded: address >> 16))
        bytes.append(UInt8(ascii: "."))
        decimalOctet(UInt8(truncatingIfNeeded: address >> 8))
        bytes.append(UInt8(ascii: "."))
        decimalOctet(UInt8(truncatingIfNeeded: address))
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func decimalOctet(_ octet: UInt8) {
        if octet >= 100 { bytes.append(UInt8(ascii: "0") + octet / 100) }
        if octet >= 10 { bytes.append(UInt8(ascii: "0") + octet / 10 % 10) }
        bytes.append(UInt8(ascii: "0") + octet % 10)
    }

    public mutating func comma() { bytes.append(UInt8(ascii: ",")) }
}

import HTTPDNSCore

/// Appends JSON to a growing byte array without an encoder. The caller writes structure (`{`,
/// `,`, keys) in order; strings are escaped (`JSONSink.string`).
public struct JSONWriter: Sendable, JSONSink {
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
        AnswerRendering.writeAddresses(list, to: &self)
    }

    public mutating func comma() { bytes.append(UInt8(ascii: ",")) }

    // JSONSink

    mutating func put(_ byte: UInt8) { bytes.append(byte) }

    mutating func put(_ utf8: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: utf8) }

    mutating func put(_ text: StaticString) { raw(text) }

    mutating func decimal(_ value: UInt32) { number(value) }

    /// Formatted by `AddressList.writeDottedQuad` (the one formatter of packed addresses), then
    /// appended.
    mutating func ipv4(_ address: UInt32) {
        AddressList.appendDottedQuad(address, to: &bytes)
    }
}

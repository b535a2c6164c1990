import CKnot

/// Domain names between presentation text and wire form, by libknot.
enum DNSName {
    /// `text` (with or without the final dot) in wire form (`knot_dname_from_str`); `.malformed`
    /// when libknot does not read it as a name.
    static func wire(_ text: String) throws(DNSMessageError) -> [UInt8] {
        // `knot_dname_from_str` reads a C string: a NUL would end the name early.
        guard !text.utf8.contains(0) else { throw DNSMessageError(.malformed, "a domain name cannot contain a NUL") }
        var storage = [UInt8](repeating: 0, count: Int(KNOT_DNAME_MAXLEN))
        return try storage.withUnsafeMutableBufferPointer { (buffer) throws(DNSMessageError) -> [UInt8] in
            let written = try Knot.require(
                knot_dname_from_str(buffer.baseAddress, text, buffer.count), "knot_dname_from_str", malformed: true)
            return Array(UnsafeBufferPointer(start: written, count: knot_dname_size(written)))
        }
    }

    /// A wire name as presentation text with the final dot (`knot_dname_to_str`); `.malformed`
    /// when `name` is NULL or libknot cannot write it.
    static func text(_ name: UnsafePointer<knot_dname_t>?) throws(DNSMessageError) -> String {
        try withText(name, nullFrom: "knot_dname_to_str", malformed: true) { String(decoding: $0, as: UTF8.self) }
    }

    /// Gives `body` a wire name as presentation text with the final dot (`knot_dname_to_str`,
    /// written on the stack: at most `KNOT_DNAME_TXT_MAXLEN` characters and the NUL). A NULL
    /// `name` is `nullFrom`'s failure; `malformed`: whether a failure is the input's
    /// (`.malformed`) or the library's (`.library`).
    static func withText<R>(
        _ name: UnsafePointer<knot_dname_t>?, nullFrom call: StaticString, malformed: Bool,
        _ body: (UnsafeRawBufferPointer) throws(DNSMessageError) -> R
    ) throws(DNSMessageError) -> R {
        let name = try Knot.require(name, call, malformed: malformed)
        return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(KNOT_DNAME_TXT_MAXLEN) + 1) {
            (buffer) throws(DNSMessageError) -> R in
            let text = try Knot.require(
                knot_dname_to_str(buffer.baseAddress, name, buffer.count), "knot_dname_to_str", malformed: malformed)
            return try body(UnsafeRawBufferPointer(start: text, count: strlen(text)))
        }
    }
}

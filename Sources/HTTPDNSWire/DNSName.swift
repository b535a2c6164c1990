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
        let name = try Knot.require(name, "knot_dname_to_str", malformed: true)
        var buffer = [CChar](repeating: 0, count: Int(KNOT_DNAME_TXT_MAXLEN) + 1)
        _ = try Knot.require(knot_dname_to_str(&buffer, name, buffer.count), "knot_dname_to_str", malformed: true)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import CKnot

/// Header fields of a message's bytes, set in place (`knot_wire_*`).
public enum DNSHeader {
    /// `message` with its ID replaced; unchanged when shorter than a header.
    public static func settingID(_ id: UInt16, of message: [UInt8]) -> [UInt8] {
        var bytes = message
        guard bytes.count >= Int(KNOT_WIRE_HEADER_SIZE.rawValue) else { return bytes }
        bytes.withUnsafeMutableBufferPointer { knot_wire_set_id($0.baseAddress, id) }
        return bytes
    }
}

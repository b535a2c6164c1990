import CKnot

/// Writes DNS queries with libknot (`knot_dname_from_str`, `knot_pkt_put_question`): one
/// question, class IN, RD set, optionally an OPT record with a Client Subnet option.
public enum DNSQueryWriter {
    /// The query for `name` (presentation form, with or without the final dot) and `type`.
    public static func query(
        name: String, type: UInt16, id: UInt16 = 0, clientSubnet: DNSQueryMessage.ClientSubnet? = nil
    ) throws(DNSMessageError) -> [UInt8] {
        let wireName = try DNSName.wire(name)
        let packet = try KnotPacket(capacity: Int(KNOT_WIRE_HEADER_SIZE.rawValue) + wireName.count + 4 + 64)
        knot_wire_set_id(packet.wire, id)
        knot_wire_set_rd(packet.wire)
        try wireName.withUnsafeBufferPointer { (name) throws(DNSMessageError) in
            try Knot.check(
                knot_pkt_put_question(packet.pointer, name.baseAddress, UInt16(KNOT_CLASS_IN.rawValue), type), "knot_pkt_put_question")
        }
        if let clientSubnet {
            try Knot.check(knot_pkt_begin(packet.pointer, KNOT_ADDITIONAL), "knot_pkt_begin")
            try DNSResponseWriter.putOPT(subnet: clientSubnet, scope: clientSubnet.scopePrefixLength, into: packet)
        }
        return packet.bytes
    }
}

import CKnot

/// A `knot_pkt_t` and the buffer it owns, freed with it (`knot_pkt_free`). Thread-confined:
/// made, read and dropped by one thread.
final class KnotPacket {
    let pointer: UnsafeMutablePointer<knot_pkt_t>

    /// An empty packet (a zeroed header) of at most `capacity` bytes (`knot_pkt_new`).
    init(capacity: Int) throws(DNSMessageError) {
        guard (Int(KNOT_WIRE_HEADER_SIZE.rawValue)...Int(KNOT_WIRE_MAX_PKTSIZE.rawValue)).contains(capacity) else {
            throw DNSMessageError(.library, "a packet of \(capacity) bytes is beyond a DNS message's size")
        }
        pointer = try Knot.require(knot_pkt_new(nil, UInt16(capacity), nil), "knot_pkt_new")
    }

    /// A packet holding a copy of `bytes`, parsed (`knot_pkt_parse`): question, sections, EDNS.
    init(parsing bytes: [UInt8]) throws(DNSMessageError) {
        guard bytes.count >= Int(KNOT_WIRE_HEADER_SIZE.rawValue) else {
            throw DNSMessageError(.malformed, "\(bytes.count) bytes are shorter than a DNS header (12)")
        }
        guard bytes.count <= Int(KNOT_WIRE_MAX_PKTSIZE.rawValue) else {
            throw DNSMessageError(.malformed, "\(bytes.count) bytes are longer than a DNS message may be (65535)")
        }
        pointer = try Knot.require(
            bytes.withUnsafeBufferPointer { chttpdns_knot_pkt_copying($0.baseAddress, $0.count, $0.count) },
            "knot_pkt_new")
        // Throwing here still runs `deinit` (every stored property is set), which frees the packet.
        try Knot.check(knot_pkt_parse(pointer, 0), "knot_pkt_parse", malformed: true)
    }

    deinit {
        knot_pkt_free(pointer)
    }

    var wire: UnsafeMutablePointer<UInt8> { pointer.pointee.wire }

    /// The message as written so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: pointer.pointee.wire, count: pointer.pointee.size)) }

    var id: UInt16 { knot_wire_get_id(wire) }
    var isReply: Bool { knot_wire_get_qr(wire) != 0 }
    var opcode: UInt8 { knot_wire_get_opcode(wire) }
    var questionCount: UInt16 { knot_wire_get_qdcount(wire) }
    /// The RCODE with the EDNS extension (`knot_pkt_ext_rcode`).
    var rcode: UInt16 { knot_pkt_ext_rcode(pointer) }

    /// The records of `section`, one RRset at a time.
    func rrsets(_ section: knot_section_t) -> [UnsafePointer<knot_rrset_t>] {
        (0..<chttpdns_knot_section_count(pointer, section)).map { chttpdns_knot_section_rr(pointer, section, $0) }
    }
}

@available(*, unavailable) extension KnotPacket: Sendable {}

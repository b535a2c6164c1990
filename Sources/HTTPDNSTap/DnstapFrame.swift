import HTTPDNSCore
import HTTPDNSWire

/// One dnstap frame (`Dnstap` of dnstap.proto, type MESSAGE) for one logged lookup: a
/// `CLIENT_RESPONSE` message with the client's network as its query address (masked as the
/// query log keeps it), the lookup's time, its question as `query_message` and, as
/// `response_message`, that question answered with the lookup's RCODE (the header and the
/// question: the log does not keep the addresses answered). Encoded as Protocol Buffers by
/// hand: the few varint, bytes and fixed32 fields dnstap uses.
public enum DnstapFrame {
    /// The frames of `entry`: one per name (a batch logged "a.example,b.example" is two
    /// questions); none for a name that is not a DNS name.
    public static func frames(_ entry: QueryLogEntry, identity: [UInt8], version: [UInt8]) -> [[UInt8]] {
        let type = questionType(entry.type)
        let rcode = responseCode(entry)
        var (family, address): (UInt64?, [UInt8]?) = (nil, nil)
        if let network = entry.client.split(separator: "/").first, let ip = IPAddress(String(network)) {
            family = ip.family == .a ? 1 : 2
            address = ip.bytes
        }
        let seconds = entry.time.rounded(.down)
        let time = (UInt64(max(0, seconds)), UInt32(max(0, min(999_999_999, (entry.time - seconds) * 1e9))))
        return entry.host.split(separator: ",").compactMap { name in
            guard let query = try? DNSQueryWriter.query(name: String(name), type: type), query.count >= 12 else { return nil }
            var response = query
            response[2] |= 0x80  // QR
            response[3] = 0x80 | rcode  // RA, RCODE
            var message = ProtobufWriter()
            message.varint(1, 6)  // type: CLIENT_RESPONSE
            if let family, let address {
                message.varint(2, family)  // socket_family: INET, INET6
                message.varint(3, 2)  // socket_protocol: TCP (every format httpdnsd logs is HTTP)
                message.bytes(4, address)  // query_address
            }
            message.varint(8, time.0)  // query_time_sec
            message.fixed32(9, time.1)  // query_time_nsec
            message.bytes(10, query)  // query_message
            message.varint(12, time.0)  // response_time_sec
            message.fixed32(13, time.1)  // response_time_nsec
            message.bytes(14, response)  // response_message
            var frame = ProtobufWriter()
            frame.bytes(1, identity)
            frame.bytes(2, version)
            frame.bytes(14, message.bytes)  // message
            frame.varint(15, 1)  // type: MESSAGE
            return frame.bytes
        }
    }

    /// The question's type: the logged DNS type (`AAAA`, `TYPE65`, ...); A for the v1 and EMAS
    /// lookups of both families or of either (`auto`, `A,AAAA`).
    static func questionType(_ text: String) -> UInt16 {
        if text.hasPrefix("TYPE"), let number = UInt16(text.dropFirst(4)) { return number }
        return DNSTypeNames.number(text) ?? 1
    }

    /// The RCODE the lookup ended with: an RFC 8484 answer's own; else REFUSED for a refused or
    /// rate-limited request, FORMERR for an invalid one, SERVFAIL for a failed one, NOERROR.
    static func responseCode(_ entry: QueryLogEntry) -> UInt8 {
        if !entry.rcode.isEmpty {
            if entry.rcode.hasPrefix("RCODE"), let number = UInt8(entry.rcode.dropFirst(5)) { return number & 0x0F }
            return DNSTypeNames.rcodes.firstIndex(of: entry.rcode).map(UInt8.init) ?? 2
        }
        switch entry.source {
        case "refused", "limited": return 5
        case "invalid": return 1
        case "failed": return 2
        default: return 0
        }
    }
}

/// Protocol Buffers' wire format (varint, length-delimited and fixed32 fields), for the frames.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ field: Int, _ value: UInt64) {
        raw(UInt64(field) << 3 | 0)
        raw(value)
    }

    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        raw(UInt64(field) << 3 | 2)
        raw(UInt64(value.count))
        bytes += value
    }

    mutating func fixed32(_ field: Int, _ value: UInt32) {
        raw(UInt64(field) << 3 | 5)
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    /// A base-128 varint, least significant group first.
    private mutating func raw(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}

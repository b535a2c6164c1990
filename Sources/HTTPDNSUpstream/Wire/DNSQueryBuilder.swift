import CAres
import HTTPDNSCore

/// Builds DNS query messages with c-ares (`ares_create_query`): ID 0 (cache-friendly for DoH
/// GET), RD set, class IN; optionally an EDNS0 OPT record with a Client Subnet option (RFC 7871).
enum DNSQueryBuilder {
    /// UDP payload size advertised in the OPT record when one is added.
    static let ednsPayloadSize: Int32 = 1232

    /// The query for `host`/`family`; nil if c-ares rejects the name. With `clientSubnet`
    /// (`1.2.3.0/24`, `2001:db8::/56`; without a prefix /24 resp. /56) an ECS option is added;
    /// an unparseable subnet is ignored.
    static func query(host: String, family: RecordFamily, clientSubnet: String? = nil) -> [UInt8]? {
        let ecs = clientSubnet.flatMap(clientSubnetOption)
        var buffer: UnsafeMutablePointer<UInt8>?
        var length: Int32 = 0
        let status = ares_create_query(
            host, 1 /* class IN */, Int32(family.rawValue), 0, 1, &buffer, &length,
            ecs == nil ? 0 : ednsPayloadSize)
        guard status == ARES_SUCCESS, let buffer else { return nil }
        defer { ares_free_string(buffer) }
        var message = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        if let ecs {
            // ares_create_query ends the message with the OPT record and an RDLENGTH of 0:
            // append the option as its RDATA.
            guard message.count >= 11, message[message.count - 2] == 0, message[message.count - 1] == 0 else {
                return message
            }
            message[message.count - 2] = UInt8(ecs.count >> 8)
            message[message.count - 1] = UInt8(ecs.count & 0xFF)
            message.append(contentsOf: ecs)
        }
        return message
    }

    /// The EDNS0 option bytes for a Client Subnet (option code 8), or nil for bad input.
    static func clientSubnetOption(_ subnet: String) -> [UInt8]? {
        let parts = subnet.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let address = IPAddress(String(first)) else { return nil }
        let maximum = address.family == .a ? 32 : 128
        let prefix: Int
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...maximum).contains(value) else { return nil }
            prefix = value
        } else {
            prefix = address.family == .a ? 24 : 56
        }
        var bytes = Array(address.bytes.prefix((prefix + 7) / 8))
        if prefix % 8 != 0, let last = bytes.indices.last {
            bytes[last] &= UInt8(truncatingIfNeeded: 0xFF << (8 - prefix % 8))
        }
        let length = 4 + bytes.count
        var option: [UInt8] = [0, 8, UInt8(length >> 8), UInt8(length & 0xFF)]
        option += [0, address.family == .a ? 1 : 2, UInt8(prefix), 0]
        option += bytes
        return option
    }
}

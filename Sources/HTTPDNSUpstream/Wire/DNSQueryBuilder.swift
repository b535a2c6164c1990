import HTTPDNSCore

/// Builds DNS query messages: ID 0 (cache-friendly for DoH GET), RD set, one question of class
/// IN; optionally an EDNS0 OPT record with a Client Subnet option (RFC 7871). A `HostName` is
/// valid, so it always encodes (labels of 1–63 bytes, at most 255 bytes in all), and the message
/// is written in place: an upstream query's URL is made without an intermediate array.
enum DNSQueryBuilder {
    /// UDP payload size advertised in the OPT record when one is added.
    static let ednsPayloadSize: UInt16 = 1232

    /// The longest message: the header, the longest name, type and class, an OPT record, and a
    /// Client Subnet option with a whole IPv6 address.
    static let maximumLength = 12 + (HostName.maximumLength + 2) + 4 + 11 + 4 + 4 + 16

    /// The query for `host`/`family`. With `clientSubnet` (`1.2.3.0/24`, `2001:db8::/56`; without
    /// a prefix /24 resp. /56) an ECS option is added; an unparseable subnet is ignored.
    static func query(host: HostName, family: RecordFamily, clientSubnet: String? = nil) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: maximumLength) { buffer, count in
            count = write(host: host, family: family, clientSubnet: clientSubnet, into: buffer)
        }
    }

    /// Writes the query into `buffer`, at least `maximumLength` bytes, and returns its length.
    static func write(
        host: HostName, family: RecordFamily, clientSubnet: String?, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        precondition(buffer.count >= maximumLength, "a DNS query buffer of \(buffer.count) bytes")
        let ecs = clientSubnet.flatMap(clientSubnetOption)
        let raw = UnsafeMutableRawBufferPointer(buffer)
        // ID 0, flags RD, QDCOUNT 1; ANCOUNT and NSCOUNT 0, ARCOUNT 1 for the OPT record if any.
        raw.storeBytes(of: UInt64(0x0000_0100_0001_0000).bigEndian, toByteOffset: 0, as: UInt64.self)
        raw.storeBytes(of: UInt32(ecs == nil ? 0 : 1).bigEndian, toByteOffset: 8, as: UInt32.self)
        // The name's bytes one further on, each dot then replaced by the length of the label after
        // it, and the first label's length before them.
        var name = host.value
        var end = name.withUTF8 { name in
            _ = UnsafeMutableBufferPointer(rebasing: buffer[13...]).initialize(fromContentsOf: name)
            return 13 + name.count
        }
        var labelEnd = end
        var index = end - 1
        while index >= 12 {
            if index == 12 || buffer[index] == UInt8(ascii: ".") {
                buffer[index] = UInt8(labelEnd - index - 1)
                labelEnd = index
            }
            index -= 1
        }
        buffer[end] = 0  // the root label
        raw.storeBytes(of: family.rawValue.bigEndian, toByteOffset: end + 1, as: UInt16.self)
        raw.storeBytes(of: UInt16(1).bigEndian, toByteOffset: end + 3, as: UInt16.self)  // class IN
        end += 5
        if let ecs {
            // OPT: the root name, type 41, the payload size as its class, TTL 0, the option as RDATA.
            let opt: [UInt8] = [
                0, 0, 41, UInt8(ednsPayloadSize >> 8), UInt8(ednsPayloadSize & 0xFF), 0, 0, 0, 0,
                UInt8(ecs.count >> 8), UInt8(ecs.count & 0xFF),
            ]
            for part in [opt, ecs] {
                end += UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: part)
            }
        }
        return end
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

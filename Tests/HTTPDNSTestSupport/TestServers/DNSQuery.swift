import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot DNS query over UDP to a loopback server (readiness checks of the test servers).
public enum DNSQuery {
    /// Record types the harness asks for.
    public enum RecordType: UInt16, Sendable {
        case a = 1
        case aaaa = 28
    }

    /// The parts of a reply the harness looks at.
    public struct Answer: Sendable {
        /// DNS RCODE (0 NOERROR, 3 NXDOMAIN, ...).
        public var rcode: Int
        /// Addresses of the asked type in the answer section, as text.
        public var addresses: [String]
    }

    /// Sends one query for `name`/`type` to 127.0.0.1:`port` and waits up to `timeout` seconds
    /// on a thread of its own (never on the cooperative pool). One datagram, no retry: the
    /// default leaves a server on a loaded machine seconds to answer.
    public static func ask(_ name: String, type: RecordType, port: UInt16, timeout: Double = 5) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try askBlocking(name, type: type, port: port, timeout: timeout) })
            }
            thread.start()
        }
    }

    /// The blocking form of `ask`.
    public static func askBlocking(_ name: String, type: RecordType, port: UInt16, timeout: Double = 5) throws -> Answer {
        let id = UInt16.random(in: 0...UInt16.max)
        var query: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            query.append(UInt8(label.utf8.count))
            query += Array(label.utf8)
        }
        query += [0, UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xFF), 0, 1]

        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let sent = query.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == query.count else { throw HarnessError("sendto: errno \(errno)") }
        var reply = [UInt8](repeating: 0, count: 4096)
        let received = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard received >= 12 else { throw HarnessError("no DNS reply from port \(port)") }
        reply = Array(reply[0..<received])
        guard reply[0] == UInt8(id >> 8), reply[1] == UInt8(id & 0xFF) else { throw HarnessError("DNS id mismatch") }
        let rcode = Int(reply[3] & 0x0F)
        let questions = Int(reply[4]) << 8 | Int(reply[5])
        let answers = Int(reply[6]) << 8 | Int(reply[7])
        var offset = 12
        for _ in 0..<questions { offset = try skipName(reply, offset) + 4 }
        var addresses: [String] = []
        for _ in 0..<answers {
            offset = try skipName(reply, offset)
            guard offset + 10 <= reply.count else { throw HarnessError("truncated DNS reply") }
            let rtype = UInt16(reply[offset]) << 8 | UInt16(reply[offset + 1])
            let length = Int(reply[offset + 8]) << 8 | Int(reply[offset + 9])
            offset += 10
            guard offset + length <= reply.count else { throw HarnessError("truncated DNS reply") }
            if rtype == type.rawValue {
                let family = type == .a ? AF_INET : AF_INET6
                var text = [CChar](repeating: 0, count: 64)
                let ok = Array(reply[offset..<(offset + length)]).withUnsafeBytes {
                    inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) != nil
                }
                if ok { addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
            }
            offset += length
        }
        return Answer(rcode: rcode, addresses: addresses)
    }

    private static func skipName(_ message: [UInt8], _ start: Int) throws -> Int {
        var offset = start
        while offset < message.count {
            let length = message[offset]
            if length & 0xC0 == 0xC0 { return offset + 2 }
            if length == 0 { return offset + 1 }
            offset += 1 + Int(length)
        }
        throw HarnessError("truncated DNS name")
    }
}

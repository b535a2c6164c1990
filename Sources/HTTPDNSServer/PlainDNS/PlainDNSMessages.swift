import HTTPDNSCore
import HTTPDNSWire

/// The transport rules of plain DNS (`docs/dns.md`): how large a UDP response may be, what is
/// sent instead of one that is larger (RFC 1035 §4.2.1, RFC 6891 §6.2.5), and the two-byte
/// length framing of DNS over TCP (RFC 1035 §4.2.2, RFC 7766 §8).
enum PlainDNSMessages {
    /// The transports DNS messages are served over: plain DNS's, and DNS over TLS (RFC 7858,
    /// the TCP framing inside TLS; `docs/dot.md`).
    enum Transport: String, Sendable, CaseIterable {
        case udp, tcp, dot
    }

    /// The largest UDP response sent whatever a client advertises: the DNS Flag Day 2020 size,
    /// which fits the usual path MTU without IP fragmentation.
    static let maxUDPPayload = 1232
    /// The UDP limit of a query without EDNS (RFC 1035 §2.3.4).
    static let classicUDPPayload = 512

    /// The largest UDP response `query`'s client takes: 512 without EDNS, else the size its OPT
    /// record advertises (at least 512, RFC 6891 §6.2.5), capped at `maxUDPPayload`.
    static func udpLimit(_ query: DNSQueryMessage) -> Int {
        guard let edns = query.edns else { return classicUDPPayload }
        return min(max(Int(edns.payloadSize), classicUDPPayload), maxUDPPayload)
    }

    /// `response` when it fits in `limit` bytes, else the response to `query` with the same
    /// RCODE, the question only (no records in any section but the OPT record the writer adds for
    /// an EDNS query) and TC set, so that the client asks again over TCP. Nil when even that
    /// cannot be written.
    static func fitted(_ response: [UInt8], query: DNSQueryMessage, limit: Int) -> [UInt8]? {
        guard response.count > limit else { return response }
        let rcode = response.count >= 4 ? response[3] & 0x0F : DNSResponseWriter.serverFailure
        guard var truncated = try? DNSResponseWriter.response(to: query, rcode: rcode, answer: nil), truncated.count >= 4 else {
            return nil
        }
        truncated[2] |= truncationFlag
        return truncated
    }

    /// TC, in the third byte of the header.
    static let truncationFlag: UInt8 = 0x02

    /// Whether `message` has TC set.
    static func isTruncated(_ message: [UInt8]) -> Bool {
        message.count >= 4 && message[2] & truncationFlag != 0
    }

    /// `message` with its two-byte length in front, for TCP; nil for one longer than 65535 bytes.
    static func framed(_ message: [UInt8]) -> [UInt8]? {
        guard message.count <= Int(UInt16.max) else { return nil }
        return [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }

    /// The messages of one TCP connection's byte stream, as they arrive in pieces: `append`
    /// what `recv` gave, then take whole messages with `next` until it returns nil. A message
    /// of length 0 is returned as an empty array (the caller counts it as malformed).
    struct StreamReader {
        private var buffer: [UInt8] = []
        private var start = 0

        /// Bytes received and not yet taken as messages.
        var pendingCount: Int { buffer.count - start }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            if start > 0 && start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            buffer.append(contentsOf: bytes)
        }

        /// Whether a whole message waits.
        var hasMessage: Bool {
            pendingCount >= 2 && pendingCount >= 2 + (Int(buffer[start]) << 8 | Int(buffer[start + 1]))
        }

        /// The next whole message, nil until all its bytes are in.
        mutating func next() -> [UInt8]? {
            guard hasMessage else { return nil }
            let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
            let message = Array(buffer[(start + 2)..<(start + 2 + length)])
            start += 2 + length
            if start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 65_536 {
                buffer.removeFirst(start)
                start = 0
            }
            return message
        }
    }
}

import CMicroHTTPD
import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// The access log (`accessLog: true`): one `Log` line per answered request, through `LogSink`
/// (an HTTP thread never writes to the disk or the pipe itself), with a request id taken from
/// `X-Request-Id` or made, which the response carries back in `X-Request-Id`.
enum AccessLog {
    /// Query arguments never logged: signatures, keys, encrypted queries and their parts.
    static let hiddenArguments: Set<String> = ["sign", "s", "key", "enc", "ak", "kid", "t", "ts", "token", "secret"]
    /// The longest request id taken from a client.
    static let maximumRequestIDLength = 128

    /// The client's `X-Request-Id` when it is 1-128 characters of letters, digits and
    /// `-_.:=+/`; else a new one (32 hex digits).
    static func requestID(from header: UnsafePointer<CChar>?) -> String {
        if let header {
            let length = strnlen(header, maximumRequestIDLength + 1)
            if length > 0 && length <= maximumRequestIDLength {
                let bytes = UnsafeRawBufferPointer(start: header, count: length)
                if bytes.allSatisfy(isRequestIDByte) { return String(decoding: bytes, as: UTF8.self) }
            }
        }
        return newRequestID()
    }

    static func isRequestIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "+"),
            UInt8(ascii: "/"):
            true
        default: false
        }
    }

    static func newRequestID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        let text = String(high, radix: 16) + String(low, radix: 16)
        return String(repeating: "0", count: 32 - text.count) + text
    }

    /// Monotonic seconds, for durations.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `path?name=value&...` with the hidden arguments left out and values percent-encoded.
    static func target(_ connection: OpaquePointer, path: UnsafePointer<CChar>?) -> String {
        final class Box { var query = "" }
        let box = Box()
        let iterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
            guard let cls, let key else { return .YES }
            let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
            guard !AccessLog.hiddenArguments.contains(name.lowercased()) else { return .YES }
            let box = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
            box.query += box.query.isEmpty ? "?" : "&"
            box.query += PercentEncoding.encode(name)
            if let value {
                box.query += "="
                box.query += PercentEncoding.encode(String(decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self))
            }
            return .YES
        }
        _ = withExtendedLifetime(box) {
            MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, iterator, Unmanaged.passUnretained(box).toOpaque())
        }
        return (path.map { String(cString: $0) } ?? "/") + box.query
    }

    /// Writes the line of one answered request.
    static func write(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>?, path: UnsafePointer<CChar>?, status: Int, bytes: Int,
        context: RequestContext, account: String?, source: String?
    ) {
        guard Log.isEnabled(.info) else { return }
        let milliseconds = (now() - context.startedAt) * 1000
        let peer = chttpdns_mhd_client_address(connection).flatMap(PeerAddress.init)?.text ?? "-"
        let methodText = method.map { String(cString: $0) } ?? "-"
        let target = Self.target(connection, path: path)
        Log.write(
            .info, "access \(methodText) \(target) \(status)",
            fields: [
                ("method", methodText), ("path", target), ("status", status),
                ("duration_ms", Double(Int(milliseconds * 1000)) / 1000), ("account", account ?? "-"),
                ("source", source ?? "-"), ("bytes", bytes), ("peer", peer), ("request_id", context.requestID ?? "-"),
            ], buffered: true)
    }
}

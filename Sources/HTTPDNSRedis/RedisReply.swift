import CHiredis

/// One reply of Redis (RESP2), copied out of hiredis' `redisReply` before hiredis frees it.
public enum RedisReply: Sendable, Equatable {
    /// `+OK`, `+PONG`.
    case status(String)
    /// `-ERR ...` (a command that failed; `RedisConnection` passes it as `RedisError.server`).
    case error(String)
    case integer(Int64)
    /// A bulk string: bytes, binary-safe.
    case bulk([UInt8])
    /// A nil bulk or nil array (`GET` of a missing key, `SET NX` that did not set).
    case null
    case array([RedisReply])

    /// Copies `reply` (called inside a hiredis reply callback, while the reply is valid).
    init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STATUS: self = .status(Self.text(value))
        case REDIS_REPLY_ERROR: self = .error(Self.text(value))
        case REDIS_REPLY_INTEGER: self = .integer(Int64(value.integer))
        case REDIS_REPLY_STRING: self = .bulk(Self.bytes(value))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element?[index] { elements.append(RedisReply(element)) } else { elements.append(.null) }
            }
            self = .array(elements)
        default: self = .null  // REDIS_REPLY_NIL
        }
    }

    private static func bytes(_ value: redisReply) -> [UInt8] {
        guard let str = value.str, value.len > 0 else { return [] }
        return str.withMemoryRebound(to: UInt8.self, capacity: Int(value.len)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(value.len)))
        }
    }

    private static func text(_ value: redisReply) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// The bytes of a bulk string, nil for anything else.
    public var bytes: [UInt8]? {
        if case .bulk(let bytes) = self { return bytes }
        return nil
    }

    /// The bytes of a bulk string as UTF-8 text, nil for anything else.
    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The value of an integer reply.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// True for `+OK`.
    public var isOK: Bool { self == .status("OK") }
}

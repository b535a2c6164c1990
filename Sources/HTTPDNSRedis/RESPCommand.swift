/// A command in the Redis protocol (RESP2), as it goes on the wire: an array of bulk strings,
/// `*<count>\r\n` then `$<length>\r\n<bytes>\r\n` for each argument. Built here in one buffer of
/// the exact size, binary-safe, for `redisAsyncFormattedCommand`: hiredis' own formatting
/// (`redisAsyncCommandArgv`) costs several allocations and thousands of instructions a command.
/// A command is encoded once, when it is given, and kept in that form until hiredis copies it.
enum RESPCommand {
    /// The wire form of `arguments` (`arguments[0]` is the command's name), written straight into
    /// an array of the exact size (no growth checks per byte).
    static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        write(size: arrayHeaderSize(arguments.count) + bulksSize(arguments)) { buffer in
            bulks(arguments, into: buffer, at: header(UInt8(ascii: "*"), arguments.count, into: buffer, at: 0))
        }
    }

    /// The same for arguments given as text (a handshake, a subscription), each sent as its UTF-8.
    static func encode(_ arguments: [String]) -> [UInt8] {
        encode(arguments.map { Array($0.utf8) })
    }

    /// `EVALSHA <sha1> <number of keys> <keys...> <arguments...>`, written in one pass from its
    /// parts (no array of every argument is made first).
    static func evalSHA(_ sha1: [UInt8], keys: [[UInt8]], arguments: [[UInt8]]) -> [UInt8] {
        let keyCount = digits(keys.count)
        let size =
            arrayHeaderSize(3 + keys.count + arguments.count) + bulkSize(evalSHAName.count) + bulkSize(sha1.count)
            + bulkSize(keyCount) + bulksSize(keys) + bulksSize(arguments)
        return write(size: size) { buffer in
            var at = header(UInt8(ascii: "*"), 3 + keys.count + arguments.count, into: buffer, at: 0)
            at = evalSHAName.withUnsafeBufferPointer { bulk($0, into: buffer, at: at) }
            at = sha1.withUnsafeBufferPointer { bulk($0, into: buffer, at: at) }
            at = header(UInt8(ascii: "$"), keyCount, into: buffer, at: at)
            at = terminate(buffer, at: decimal(keys.count, width: keyCount, into: buffer, at: at))
            return bulks(arguments, into: buffer, at: bulks(keys, into: buffer, at: at))
        }
    }

    /// The `EVAL <text> ...` form of an `evalSHA` command (Redis answered `NOSCRIPT`): the same
    /// count, the script's text in place of `EVALSHA` and the digest, the rest copied as it is.
    static func eval(_ text: [UInt8], fromEvalSHA wire: [UInt8], sha1Count: Int) -> [UInt8] {
        // `*<count>\r\n`, then `$7\r\nEVALSHA\r\n` and `$<n>\r\n<digest>\r\n`.
        guard let headerEnd = wire.firstIndex(of: UInt8(ascii: "\n")).map({ $0 + 1 }) else { return wire }
        let rest = headerEnd + bulkSize(evalSHAName.count) + bulkSize(sha1Count)
        guard rest <= wire.count else { return wire }
        let size = headerEnd + bulkSize(evalName.count) + bulkSize(text.count) + (wire.count - rest)
        return write(size: size) { buffer in
            var at = wire.withUnsafeBufferPointer { copy(UnsafeBufferPointer(rebasing: $0[0..<headerEnd]), into: buffer, at: 0) }
            at = evalName.withUnsafeBufferPointer { bulk($0, into: buffer, at: at) }
            at = text.withUnsafeBufferPointer { bulk($0, into: buffer, at: at) }
            return wire.withUnsafeBufferPointer { copy(UnsafeBufferPointer(rebasing: $0[rest...]), into: buffer, at: at) }
        }
    }

    /// The command's name (its first argument) as text, for error messages.
    static func name(of wire: [UInt8]) -> String {
        // `*<count>\r\n$<length>\r\n<name>\r\n`
        guard let first = wire.firstIndex(of: UInt8(ascii: "\n")),
            let second = wire[(first + 1)...].firstIndex(of: UInt8(ascii: "\n")),
            let end = wire[(second + 1)...].firstIndex(of: UInt8(ascii: "\r"))
        else { return "" }
        return String(decoding: wire[(second + 1)..<end], as: UTF8.self)
    }

    private static let evalSHAName = Array("EVALSHA".utf8)
    private static let evalName = Array("EVAL".utf8)

    /// An array of exactly `size` bytes that `body` fills, returning where it stopped.
    private static func write(size: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let at = body(buffer)
            precondition(at == size, "RESP command of \(at) bytes written into \(size)")
            initialized = at
        }
    }

    private static func arrayHeaderSize(_ count: Int) -> Int { 3 + digits(count) }

    private static func bulkSize(_ length: Int) -> Int { 5 + digits(length) + length }

    /// The bytes of `parts` as bulk strings. Read in place: a `for in` over an array of arrays
    /// retains and releases each element it yields.
    private static func bulksSize(_ parts: [[UInt8]]) -> Int {
        parts.withUnsafeBufferPointer { parts in parts.indices.reduce(0) { $0 + bulkSize(parts[$1].count) } }
    }

    /// `parts` as bulk strings from `start`; returns the index after them.
    private static func bulks(_ parts: [[UInt8]], into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        parts.withUnsafeBufferPointer { parts in
            var at = start
            for index in parts.indices { at = parts[index].withUnsafeBufferPointer { bulk($0, into: buffer, at: at) } }
            return at
        }
    }

    /// `$<length>\r\n<bytes>\r\n` at `start`; returns the index after it.
    private static func bulk(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let at = header(UInt8(ascii: "$"), bytes.count, into: buffer, at: start)
        return terminate(buffer, at: copy(bytes, into: buffer, at: at))
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        if let source = bytes.baseAddress, let target = buffer.baseAddress {
            (target + start).initialize(from: source, count: bytes.count)
        }
        return start + bytes.count
    }

    private static func terminate(_ buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        buffer[start] = UInt8(ascii: "\r")
        buffer[start + 1] = UInt8(ascii: "\n")
        return start + 2
    }

    /// `<marker><count>\r\n` at `start`; returns the index after it.
    private static func header(_ marker: UInt8, _ count: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        buffer[start] = marker
        return terminate(buffer, at: decimal(count, width: digits(count), into: buffer, at: start + 1))
    }

    /// `value`'s `width` decimal digits at `start`; returns the index after them.
    private static func decimal(_ value: Int, width: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var rest = value
        var index = start + width - 1
        while index >= start {
            buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
        return start + width
    }

    /// Decimal digits of `count` (≥ 0).
    private static func digits(_ count: Int) -> Int {
        var digits = 1
        var rest = count
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }
}

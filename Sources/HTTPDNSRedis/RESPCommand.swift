/// A command in the Redis protocol (RESP2), as it goes on the wire: an array of bulk strings,
/// `*<count>\r\n` then `$<length>\r\n<bytes>\r\n` for each argument. Built here in one buffer of
/// the exact size, binary-safe, for `redisAsyncFormattedCommand`: hiredis' own formatting
/// (`redisAsyncCommandArgv`) costs several allocations and thousands of instructions a command.
enum RESPCommand {
    /// The wire form of `arguments` (`arguments[0]` is the command's name), written straight into
    /// an array of the exact size (no growth checks per byte: a miss with Redis sends two commands
    /// of seven or eight arguments).
    static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        var size = 3 + digits(arguments.count)
        for argument in arguments { size += 5 + digits(argument.count) + argument.count }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var at = header(UInt8(ascii: "*"), arguments.count, into: buffer, at: 0)
            for argument in arguments {
                at = header(UInt8(ascii: "$"), argument.count, into: buffer, at: at)
                argument.withUnsafeBufferPointer { bytes in
                    if let source = bytes.baseAddress, let target = buffer.baseAddress {
                        (target + at).initialize(from: source, count: bytes.count)
                    }
                }
                at += argument.count
                buffer[at] = UInt8(ascii: "\r")
                buffer[at + 1] = UInt8(ascii: "\n")
                at += 2
            }
            precondition(at == size, "RESP command of \(at) bytes written into \(size)")
            initialized = at
        }
    }

    /// `<marker><count>\r\n` at `start`; returns the index after it.
    private static func header(_ marker: UInt8, _ count: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let width = digits(count)
        buffer[start] = marker
        var rest = count
        var index = start + width
        while index > start {
            buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
        buffer[start + width + 1] = UInt8(ascii: "\r")
        buffer[start + width + 2] = UInt8(ascii: "\n")
        return start + width + 3
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

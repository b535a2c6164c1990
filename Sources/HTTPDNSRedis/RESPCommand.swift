/// A command in the Redis protocol (RESP2), as it goes on the wire: an array of bulk strings,
/// `*<count>\r\n` then `$<length>\r\n<bytes>\r\n` for each argument. Built here in one buffer of
/// the exact size, binary-safe, for `redisAsyncFormattedCommand`: hiredis' own formatting
/// (`redisAsyncCommandArgv`) costs several allocations and thousands of instructions a command.
enum RESPCommand {
    /// The wire form of `arguments` (`arguments[0]` is the command's name).
    static func encode(_ arguments: [[UInt8]]) -> [UInt8] {
        var size = 3 + digits(arguments.count)
        for argument in arguments { size += 5 + digits(argument.count) + argument.count }
        var wire: [UInt8] = []
        wire.reserveCapacity(size)
        header(UInt8(ascii: "*"), arguments.count, into: &wire)
        for argument in arguments {
            header(UInt8(ascii: "$"), argument.count, into: &wire)
            wire.append(contentsOf: argument)
            wire.append(UInt8(ascii: "\r"))
            wire.append(UInt8(ascii: "\n"))
        }
        return wire
    }

    /// `<marker><count>\r\n`.
    private static func header(_ marker: UInt8, _ count: Int, into wire: inout [UInt8]) {
        wire.append(marker)
        wire.appendDecimal(count)
        wire.append(UInt8(ascii: "\r"))
        wire.append(UInt8(ascii: "\n"))
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

import HTTPDNSCore
import Testing

struct DecimalDigitsTests {
    /// Every power-of-ten boundary reads back as `String(value)`: the wire writers' numbers.
    @Test(arguments: [0, 1, 9, 10, 11, 99, 100, 1_000, 33_554_432, 999_999_999_999, Int.max])
    func appendsTheDigitsStringWouldWrite(value: Int) {
        var bytes: [UInt8] = [UInt8(ascii: "$")]
        bytes.appendDecimal(value)
        #expect(bytes == Array("$\(value)".utf8))
    }
}

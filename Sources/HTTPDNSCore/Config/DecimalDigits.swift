extension Array where Element == UInt8 {
    /// Appends `value` (not negative) in decimal digits, without making a String: how the wire
    /// writers (RESP lengths, an HTTP request's `Content-Length`) put a number into their bytes.
    public mutating func appendDecimal(_ value: Int) {
        precondition(value >= 0, "appendDecimal takes no negative numbers")
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

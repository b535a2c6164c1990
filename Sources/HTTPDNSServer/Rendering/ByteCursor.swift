import HTTPDNSCore

/// Writes bytes into memory allocated beforehand for an upper bound of what is written (see
/// `AnswerRendering.fastSingle`): no growth, no reallocation; every write checks the bound, so a
/// wrong bound stops the process rather than writing past the memory.
struct ByteCursor: JSONSink {
    private var next: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    private let start: UnsafeMutablePointer<UInt8>

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        next = start
        end = start + buffer.count
    }

    /// Bytes written so far.
    var count: Int { next - start }

    private mutating func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(end - next >= count, "ByteCursor: write past the bound it was given")
        defer { next += count }
        return next
    }

    mutating func put(_ byte: UInt8) {
        reserve(1).initialize(to: byte)
    }

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        reserve(bytes.count).initialize(from: base, count: bytes.count)
    }

    mutating func put(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount).initialize(from: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// A number in decimal, written from its last digit back (up to three digits, the octets
    /// of an address, without a loop).
    mutating func decimal(_ value: UInt32) {
        let zero = UInt8(ascii: "0")
        if value < 10 {
            reserve(1).initialize(to: zero + UInt8(truncatingIfNeeded: value))
            return
        }
        if value < 100 {
            let at = reserve(2)
            at.initialize(to: zero + UInt8(truncatingIfNeeded: value / 10))
            (at + 1).initialize(to: zero + UInt8(truncatingIfNeeded: value % 10))
            return
        }
        if value < 1000 {
            let at = reserve(3)
            at.initialize(to: zero + UInt8(truncatingIfNeeded: value / 100))
            (at + 1).initialize(to: zero + UInt8(truncatingIfNeeded: value / 10 % 10))
            (at + 2).initialize(to: zero + UInt8(truncatingIfNeeded: value % 10))
            return
        }
        let digits = Self.decimalDigits(value)
        var position = reserve(digits) + digits
        var rest = value
        repeat {
            position -= 1
            position.initialize(to: UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10))
            rest /= 10
        } while rest > 0
    }

    /// An IPv4 address held as a number (first octet in the high byte), in dotted-quad form,
    /// written in place by `AddressList.writeDottedQuad`. It needs room for the longest form
    /// (`maximumDottedQuad`) whatever this address's length, as the bound of every answer counts.
    mutating func ipv4(_ address: UInt32) {
        precondition(end - next >= AddressList.maximumDottedQuad, "ByteCursor: write past the bound it was given")
        next += AddressList.writeDottedQuad(address, into: UnsafeMutableBufferPointer(start: next, count: AddressList.maximumDottedQuad))
    }

    /// The most bytes `decimal` writes (UInt32.max has 10 digits).
    static let maximumDecimal = 10

    static func decimalDigits(_ value: UInt32) -> Int {
        var digits = 1
        var limit: UInt64 = 10
        while UInt64(value) >= limit {
            digits += 1
            limit *= 10
        }
        return digits
    }
}

import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// `DecodedArgument.problem` (read a word at a time, with its own UTF-8 check) accepts and
/// refuses exactly what the rule says, checked against a byte-by-byte reference that uses the
/// standard library's UTF-8 validation: on every 1- and 2-byte input, the lead bytes of 3- and
/// 4-byte sequences with their boundary bytes, the named edge cases at every position of
/// arguments up to 24 bytes long, and random inputs.
@Suite struct DecodedArgumentTests {
    /// The rule as written: the first control character, else invalid UTF-8.
    static func reference(_ bytes: [UInt8]) -> DecodedArgument.Problem? {
        if let control = bytes.first(where: { $0 < 0x20 || $0 == 0x7F }) { return .control(control) }
        return String(validating: bytes, as: UTF8.self) == nil ? .invalidUTF8 : nil
    }

    /// The inputs among `inputs` on which `problem` and the reference disagree (at most 10).
    static func disagreements(_ inputs: some Sequence<[UInt8]>) -> [[UInt8]] {
        var found: [[UInt8]] = []
        for bytes in inputs where found.count < 10 {
            let problem = bytes.withUnsafeBytes { DecodedArgument.problem(in: $0) }
            let valid = bytes.withUnsafeBytes { DecodedArgument.isValidUTF8($0) }
            if problem != reference(bytes) || valid != (String(validating: bytes, as: UTF8.self) != nil)
                || DecodedArgument.isValidUTF8(bytes[...]) != valid
            {
                found.append(bytes)
            }
        }
        return found
    }

    /// Bytes next to every boundary the rule or UTF-8 draws.
    static let boundaries: [UInt8] = [
        0x00, 0x01, 0x1F, 0x20, 0x41, 0x7E, 0x7F, 0x80, 0x81, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED,
        0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
    ]

    /// Sequences on either side of each UTF-8 rule, and a control character among them.
    static let edges: [[UInt8]] = [
        // Valid: the smallest and largest of each length, around the surrogates, the BOM.
        [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xEF, 0xBF, 0xBF], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
        [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xEF, 0xBB, 0xBF], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80],
        // Overlong forms.
        [0xC0, 0x80], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80],
        [0xF0, 0x8F, 0xBF, 0xBF],
        // Surrogates.
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80],
        // Above U+10FFFF, and bytes that never start a sequence.
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], [0xFE], [0xFF], [0x80], [0xBF],
        // Truncated, alone and before more text.
        [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0x41], [0xE2, 0x82, 0x41], [0xF0, 0x9F, 0x98, 0x41], [0xE2, 0x41, 0xAC],
        // A continuation byte too many, and a control character inside a sequence.
        [0xC3, 0xA9, 0xA9], [0xE2, 0x82, 0x00], [0xC3, 0x7F], [0x7F], [0x00], [0x1F], [0x20], [0x7E],
    ]

    @Test func everyOneAndTwoByteInputIsJudgedAsTheReferenceJudgesIt() {
        let one = (0...255).lazy.map { [UInt8($0)] }
        let two = (0..<65_536).lazy.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(Self.disagreements(one).isEmpty)
        #expect(Self.disagreements(two).isEmpty)
    }

    @Test func everyLeadByteOfALongerSequenceIsJudgedAsTheReferenceJudgesIt() {
        let three = (0x80...0xFF).lazy.flatMap { lead in
            Self.boundaries.lazy.flatMap { second in Self.boundaries.lazy.map { [UInt8(lead), second, $0] } }
        }
        let continuations: [UInt8] = [0x00, 0x7F, 0x80, 0xBF, 0xC0]
        let four = (0xF0...0xFF).lazy.flatMap { lead in
            Self.boundaries.lazy.flatMap { second in
                continuations.lazy.flatMap { third in continuations.lazy.map { [UInt8(lead), second, third, $0] } }
            }
        }
        #expect(Self.disagreements(three).isEmpty)
        #expect(Self.disagreements(four).isEmpty)
    }

    /// Each edge case at every offset of arguments up to 24 bytes (every way it can straddle
    /// the eight-byte words, the overlapping last word and the short forms), between ASCII,
    /// and with a control character before or after it.
    @Test func theEdgeCasesAreJudgedAsTheReferenceJudgesThemWhereverTheyStand() {
        var inputs: [[UInt8]] = []
        for edge in Self.edges {
            for total in edge.count...max(edge.count, 24) {
                for offset in 0...(total - edge.count) {
                    let before = Array(repeating: UInt8(ascii: "a"), count: offset)
                    let after = Array(repeating: UInt8(ascii: "z"), count: total - edge.count - offset)
                    inputs.append(before + edge + after)
                    if offset > 0 { inputs.append([0x01] + before.dropFirst() + edge + after) }
                    if !after.isEmpty { inputs.append(before + edge + after.dropLast() + [0x7F]) }
                }
            }
        }
        #expect(Self.disagreements(inputs).isEmpty)
    }

    @Test func aControlCharacterIsFoundAtEveryPosition() {
        var inputs: [[UInt8]] = [[]]
        for count in 1...24 {
            for position in 0..<count {
                for control: UInt8 in [0x00, 0x09, 0x1F, 0x7F] {
                    var bytes = Array(repeating: UInt8(ascii: "m"), count: count)
                    bytes[position] = control
                    inputs.append(bytes)
                    // Bytes that are no control character next to it (a borrow must not make them one).
                    bytes[(position + 1) % count] = 0x20
                    inputs.append(bytes)
                    bytes[(position + count - 1) % count] = 0xFF
                    inputs.append(bytes)
                }
                var clean = Array(repeating: UInt8(ascii: "m"), count: count)
                for near: UInt8 in [0x20, 0x21, 0x7E, 0x80, 0x9F, 0xA0, 0xFF] {
                    clean[position] = near
                    inputs.append(clean)
                }
            }
        }
        #expect(Self.disagreements(inputs).isEmpty)
    }

    @Test func randomInputsAreJudgedAsTheReferenceJudgesThem() {
        var generator = SplitMix64(seed: 0x5EED_A7C0)
        var inputs: [[UInt8]] = []
        for _ in 0..<60_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let mix = Int.random(in: 0..<4, using: &generator)
            inputs.append(
                (0..<count).map { _ in
                    switch (mix, Int.random(in: 0..<100, using: &generator)) {
                    case (0, _): UInt8.random(in: 0...255, using: &generator)
                    case (_, 0..<2): UInt8.random(in: 0...0x1F, using: &generator)
                    case (1, 2..<50), (2, 2..<20): UInt8.random(in: 0x80...0xFF, using: &generator)
                    default: UInt8.random(in: 0x20...0x7E, using: &generator)
                    }
                })
            // Text of random scalars (valid), then with one byte changed.
            var text = Array(
                String(String.UnicodeScalarView((0..<count / 3).map { _ in Self.randomScalar(&generator) })).utf8)
            inputs.append(text)
            if !text.isEmpty {
                text[Int.random(in: 0..<text.count, using: &generator)] = Self.boundaries.randomElement(using: &generator)!
                inputs.append(text)
            }
        }
        #expect(Self.disagreements(inputs).isEmpty)
    }

    private static func randomScalar(_ generator: inout SplitMix64) -> Unicode.Scalar {
        let ranges: [ClosedRange<UInt32>] = [0x20...0x7E, 0x80...0x7FF, 0x800...0xFFFF, 0x10000...0x10FFFF]
        while true {
            if let scalar = Unicode.Scalar(UInt32.random(in: ranges.randomElement(using: &generator)!, using: &generator)) {
                return scalar
            }
        }
    }
}

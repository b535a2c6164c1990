import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// The in-place walk of a reply's answer section (no c-ares, no copies of names).
struct DNSAnswerWalkTests {
    /// Owner names match the question whatever their case (DNS names are case-insensitive).
    @Test func ownerNamesMatchWhateverTheirCase() throws {
        var message = DNSTestMessage()
        message.question.name = "WWW.Example.TEST"
        message.answers = [("www.example.test", 1, 300, [192, 0, 2, 10]), ("Www.EXAMPLE.test", 1, 100, [192, 0, 2, 11])]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.addresses == ["192.0.2.10", "192.0.2.11"])
        #expect(answer.ttl == 100)
    }

    /// Owners compressed into the question's name: the whole name (offset 12) and its first label
    /// then a pointer to the rest are the question's; its tail alone and another first label
    /// before the same tail are other names, not taken.
    @Test func compressedOwnerNamesMatchTheQuestionAsWritten() throws {
        let header: [UInt8] = [0, 0, 0x81, 0x80, 0, 1, 0, 4, 0, 0, 0, 0]
        let question = DNSTestMessage.name("www.example.test") + [0, 1, 0, 1]
        func record(_ owner: [UInt8], _ last: UInt8) -> [UInt8] { owner + [0, 1, 0, 1, 0, 0, 1, 0x2C, 0, 4, 192, 0, 2, last] }
        let whole = record([0xC0, 12], 10)
        let firstLabelThenPointer = record([3, 0x57, 0x57, 0x57, 0xC0, 16], 11)  // "WWW" + "example.test"
        let tailOnly = record([0xC0, 16], 12)  // "example.test"
        let otherFirstLabel = record([3, 0x78, 0x79, 0x7A, 0xC0, 16], 13)  // "xyz" + "example.test"
        let answer = try DNSReplyParser.parse(
            header + question + whole + firstLabelThenPointer + tailOnly + otherFirstLabel, family: .a
        ).get()
        #expect(answer.addresses == ["192.0.2.10", "192.0.2.11"])
    }

    /// Records of another name, another type or another class are not the question's answer.
    @Test func recordsOffTheChainAreLeftOut() throws {
        var message = DNSTestMessage()
        message.question.name = "api.example.test"
        message.answers = [
            ("other.example.test", 1, 300, [192, 0, 2, 99]),
            ("api.example.test", 28, 300, [UInt8](repeating: 1, count: 16)),
            ("api.example.test", 5, 50, DNSTestMessage.name("www.example.test")),
            ("api.example.test", 1, 300, [192, 0, 2, 98]),
            ("www.example.test", 1, 300, [192, 0, 2, 10]),
        ]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        // Once the chain has moved on to www, a record of api is not taken (as c-ares did).
        #expect(answer.addresses == ["192.0.2.10"])
        #expect(answer.ttl == 50)
    }

    /// At most `maximumAddresses` addresses are kept from one reply.
    @Test func addressesAreCapped() throws {
        var message = DNSTestMessage()
        message.answers = (0..<100).map { ("www.example.test", 1, 300, [10, 0, 0, UInt8($0)]) }
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.addresses.count == DNSReplyParser.maximumAddresses)
        #expect(answer.addresses.first == "10.0.0.0")
    }

    /// Names that loop through pointers, point past the message or use reserved label types, and
    /// address records of the wrong length, are malformed replies, not answers.
    @Test func brokenNamesAndRecordsAreMalformed() {
        var good = DNSTestMessage()
        good.answers = [("www.example.test", 1, 300, [192, 0, 2, 10])]
        let header: [UInt8] = [0, 0, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]
        let question = DNSTestMessage.name("www.example.test") + [0, 1, 0, 1]
        // An answer whose owner is a pointer to itself.
        let selfPointer = header + question + [0xC0, UInt8(12 + question.count)] + [0, 1, 0, 1, 0, 0, 1, 0x2C, 0, 4, 1, 2, 3, 4]
        // An answer whose owner points past the end.
        let pastEnd = header + question + [0xC0, 0xFF] + [0, 1, 0, 1, 0, 0, 1, 0x2C, 0, 4, 1, 2, 3, 4]
        // A reserved label type (0x40).
        let reserved = header + question + [0x41, 0x61, 0] + [0, 1, 0, 1, 0, 0, 1, 0x2C, 0, 4, 1, 2, 3, 4]
        var wrongLength = DNSTestMessage()
        wrongLength.answers = [("www.example.test", 1, 300, [192, 0, 2])]
        for bytes in [selfPointer, pastEnd, reserved, wrongLength.bytes] {
            guard case .failure(let error) = DNSReplyParser.parse(bytes, family: .a) else {
                Issue.record("expected malformed for \(bytes)")
                continue
            }
            #expect(error.code == .malformed)
        }
        #expect((try? DNSReplyParser.parse(good.bytes, family: .a).get())?.addresses == ["192.0.2.10"])
    }
}

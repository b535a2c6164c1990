import Testing

@testable import HTTPDNSRedis

/// Commands go to hiredis already in RESP: the bytes must be exactly the protocol's.
struct RESPCommandTests {
    @Test func aCommandIsAnArrayOfBulkStrings() {
        let wire = RESPCommand.encode([Array("SET".utf8), Array("k".utf8), Array("0123456789".utf8), []])
        #expect(String(decoding: wire, as: UTF8.self) == "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n$0\r\n\r\n")
    }

    /// Text arguments (a handshake, a subscription) are sent as their UTF-8 bytes.
    @Test func textArgumentsAreSentAsTheirUTF8() {
        let wire = RESPCommand.encode(["SUBSCRIBE", "httpdns:é"])
        #expect(String(decoding: wire, as: UTF8.self) == "*2\r\n$9\r\nSUBSCRIBE\r\n$10\r\nhttpdns:é\r\n")
    }

    @Test func argumentsAreBinarySafe() {
        let binary: [UInt8] = [0, 13, 10, 255] + [UInt8](repeating: 42, count: 996)
        let wire = RESPCommand.encode([Array("SET".utf8), binary])
        let expected = Array("*2\r\n$3\r\nSET\r\n$1000\r\n".utf8) + binary + Array("\r\n".utf8)
        #expect(wire == expected)
    }

    @Test func countsOfSeveralDigitsAreWrittenWhole() {
        let arguments = (0..<12).map { Array("a\($0)".utf8) }
        let wire = RESPCommand.encode(arguments)
        let expected = "*12\r\n" + (0..<12).map { "$\($0 < 10 ? 2 : 3)\r\na\($0)\r\n" }.joined()
        #expect(String(decoding: wire, as: UTF8.self) == expected)
    }

    /// A script call is written from its parts, and its `EVAL` form made from that wire, exactly
    /// as the commands would be encoded argument by argument: with no key, one, and twelve (a key
    /// count and an argument count of two digits).
    @Test(arguments: [0, 1, 12])
    func aScriptCallAndItsEvalFormAreTheCommandsEncodedWhole(keyCount: Int) {
        let sha1 = Array(String(repeating: "ab", count: 20).utf8)
        let text = Array("return redis.call('GET', KEYS[1])\r\n".utf8)
        let keys = (0..<keyCount).map { Array("key:\($0)".utf8) }
        let arguments: [[UInt8]] = [Array("token".utf8), [0, 13, 10]]
        let count = Array(String(keyCount).utf8)
        let evalSHA = RESPCommand.evalSHA(sha1, keys: keys, arguments: arguments)
        #expect(evalSHA == RESPCommand.encode([Array("EVALSHA".utf8), sha1, count] + keys + arguments))
        #expect(
            RESPCommand.eval(text, fromEvalSHA: evalSHA, sha1Count: sha1.count)
                == RESPCommand.encode([Array("EVAL".utf8), text, count] + keys + arguments))
        #expect(RESPCommand.name(of: evalSHA) == "EVALSHA")
    }
}

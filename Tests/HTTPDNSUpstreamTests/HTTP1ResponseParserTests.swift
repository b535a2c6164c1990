import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// The HTTP/1.1 client's response parser, without sockets: framing, limits, malformed input, and
/// the header block it keeps for ``UpstreamHTTPResponse/header(_:)``.
@Suite struct HTTP1ResponseParserTests {
    /// What parsing `pieces` in order gave: the parser (complete or not), bytes left over, or the failure.
    private struct Parsed {
        var parser: HTTP1ResponseParser
        var leftover = 0
        var failure: HTTP1ResponseParser.Failure?
    }

    private func parse(_ pieces: [[UInt8]], eof: Bool = false, parser: HTTP1ResponseParser = HTTP1ResponseParser()) -> Parsed {
        var parsed = Parsed(parser: parser)
        do throws(HTTP1ResponseParser.Failure) {
            for piece in pieces {
                var outcome: Result<Int, HTTP1ResponseParser.Failure> = .success(0)
                piece.withUnsafeBytes { raw in
                    outcome = Result { () throws(HTTP1ResponseParser.Failure) -> Int in try parsed.parser.consume(raw) }
                }
                parsed.leftover += piece.count - (try outcome.get())
            }
            if eof { try parsed.parser.finishAtEOF() }
        } catch {
            parsed.failure = error
        }
        return parsed
    }

    private func parse(_ text: String, eof: Bool = false) -> Parsed { parse([Array(text.utf8)], eof: eof) }

    static let chunkedSample =
        "HTTP/1.1 200 OK\r\nContent-Type: application/dns-message\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: yes\r\n\r\n"

    @Test func contentLengthFramesTheBodyAndKeepsTheConnection() {
        let parsed = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nDate: today\r\n\r\nhelloEXTRA")
        #expect(parsed.failure == nil)
        #expect(parsed.parser.isComplete)
        #expect(parsed.parser.status == 200)
        #expect(parsed.parser.body == Array("hello".utf8))
        #expect(parsed.leftover == 5)
        #expect(parsed.parser.keepAlive)
        // As curl hands the lines to EasyHandle's header callback: each field line, then the empty line.
        #expect(parsed.parser.headerBlock == Array("Content-Length: 5\r\nDate: today\r\n\r\n".utf8))
    }

    @Test func chunkedBodySplitAtEveryByteBoundaryGivesTheSameResponse() {
        let bytes = Array(Self.chunkedSample.utf8)
        for split in 0...bytes.count {
            let parsed = parse([Array(bytes[..<split]), Array(bytes[split...])])
            #expect(parsed.failure == nil, "split at \(split)")
            #expect(parsed.parser.isComplete, "split at \(split)")
            #expect(parsed.parser.body == Array("helloabcdefghijklmnopqrstuvwxyz".utf8), "split at \(split)")
            #expect(parsed.leftover == 0)
        }
        // One byte at a time.
        let bytewise = parse(bytes.map { [$0] })
        #expect(bytewise.parser.isComplete && bytewise.parser.body.count == 31)
    }

    @Test func chunkExtensionsAreIgnoredAndTrailersJoinTheHeaderBlock() {
        let parsed = parse(Self.chunkedSample)
        #expect(parsed.parser.keepAlive)
        #expect(
            parsed.parser.headerBlock
                == Array("Content-Type: application/dns-message\r\nTransfer-Encoding: chunked\r\n\r\nX-Trailer: yes\r\n".utf8))
        #expect(UpstreamHTTPResponse(status: 200, headerBlock: parsed.parser.headerBlock).header("x-trailer") == "yes")
    }

    @Test func interimResponsesAreSkipped() {
        let parsed = parse(
            "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                + "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno")
        #expect(parsed.parser.status == 404)
        #expect(parsed.parser.body == Array("no".utf8))
        #expect(parsed.parser.headerBlock == Array("Content-Length: 2\r\n\r\n".utf8))
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.1 200 OK\r\nconnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true),
        ("HTTP/1.1 204 No Content\r\n\r\n", true),
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
    ])
    func connectionReuseFollowsVersionAndConnectionField(_ text: String, _ reusable: Bool) {
        let parsed = parse(text)
        #expect(parsed.parser.isComplete)
        #expect(parsed.parser.keepAlive == reusable)
    }

    @Test func withoutLengthOrChunkingTheBodyRunsUntilTheConnectionEnds() {
        let open = parse("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\npart one, ")
        #expect(!open.parser.isComplete)
        let closed = parse(["HTTP/1.0 200 OK\r\n\r\npart one, ", "part two"].map { Array($0.utf8) }, eof: true)
        #expect(closed.failure == nil)
        #expect(closed.parser.isComplete)
        #expect(closed.parser.body == Array("part one, part two".utf8))
        #expect(!closed.parser.keepAlive)
    }

    @Test func theConnectionEndingEarlyIsTruncated() {
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", eof: true).failure == .truncated)
        #expect(parse("", eof: true).failure == .truncated)
        #expect(!parse("", eof: true).parser.receivedAny)
    }

    @Test func aHeaderBlockOverTheLimitFails() {
        let field = "X-Big: " + String(repeating: "v", count: 1000) + "\r\n"
        let small = parse("HTTP/1.1 200 OK\r\n" + String(repeating: field, count: 60) + "Content-Length: 0\r\n\r\n")
        #expect(small.failure == nil && small.parser.isComplete)
        let large = parse("HTTP/1.1 200 OK\r\n" + String(repeating: field, count: 70) + "Content-Length: 0\r\n\r\n")
        #expect(large.failure == .headerTooLarge)
        // A status line that never ends is cut off too.
        #expect(parse("HTTP/1.1 200 " + String(repeating: "x", count: 70_000)).failure == .headerTooLarge)
    }

    @Test func aBodyOverTheLimitFails() {
        let limit = EasyHandle.maximumBodySize
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: \(limit + 1)\r\n\r\n").failure == .bodyTooLarge)
        let chunk = String(limit + 1, radix: 16)
        #expect(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(chunk)\r\n").failure == .bodyTooLarge)
        let small = HTTP1ResponseParser(maximumBodySize: 4)
        #expect(parse([Array("HTTP/1.1 200 OK\r\n\r\nfive!".utf8)], parser: small).failure == .bodyTooLarge)
    }

    @Test(arguments: [
        ("HTTP/2 200\r\n\r\n", HTTP1ResponseParser.Failure.badStatusLine),
        ("HTTP/1.1 20 OK\r\n\r\n", .badStatusLine),
        ("HTTP/1.1 2000 OK\r\n\r\n", .badStatusLine),
        ("ICY 200 OK\r\n\r\n", .badStatusLine),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", .badStatusLine),
        ("HTTP/1.1 200 OK\r\nNo colon\r\n\r\n", .badHeaderLine),
        ("HTTP/1.1 200 OK\r\nName : value\r\n\r\n", .badHeaderLine),
        ("HTTP/1.1 200 OK\r\n: value\r\n\r\n", .badHeaderLine),
        ("HTTP/1.1 200 OK\r\nContent-Length\r\n\r\n", .badHeaderLine),
        ("HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n", .badHeaderLine),
        ("HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", .badContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .badContentLength),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .badChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", .badChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n", .badChunk),
    ])
    func malformedResponsesAreErrors(_ text: String, _ failure: HTTP1ResponseParser.Failure) {
        #expect(parse(text).failure == failure)
    }

    @Test func resetReadsTheNextResponseOnTheSameConnection() {
        var parsed = parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na")
        let first = parsed.parser.body
        parsed.parser.reset()
        parsed = parse([Array("HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nbc".utf8)], parser: parsed.parser)
        #expect(first == Array("a".utf8))
        #expect(parsed.parser.status == 500 && parsed.parser.body == Array("bc".utf8))
    }
}

/// Which URLs the HTTP/1.1 client takes (the rest go to libcurl), and the request it writes.
@Suite struct HTTP1OriginTests {
    @Test(arguments: [
        ("http://127.0.0.1:8053/dns-query", "127.0.0.1:8053", "/dns-query"),
        ("http://[::1]:8053/dns-query?dns=AAAB", "[::1]:8053", "/dns-query?dns=AAAB"),
        ("http://10.0.0.1/", "10.0.0.1", "/"),
        ("http://10.0.0.1", "10.0.0.1", ""),
        ("http://10.0.0.1?x=1", "10.0.0.1", "?x=1"),
    ])
    func anAddressLiteralURLIsTaken(_ url: String, _ authority: String, _ target: String) throws {
        let (origin, start) = try #require(HTTP1Origin.parse(url))
        #expect(origin.authority == Array(authority.utf8))
        #expect(Array(url.utf8)[start...].elementsEqual(target.utf8))
    }

    @Test(arguments: [
        "https://127.0.0.1/dns-query", "http://localhost:8053/", "http://dns.example/", "http://user@127.0.0.1/",
        "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:/", "http://[fe80::1%25eth0]/",
        "http://127.1/", "http://127.0.0.1/a b", "http://127.0.0.1/#frag", "HTTP://127.0.0.1/", "http://[::1/",
    ])
    func anyOtherURLIsLeftToCurl(_ url: String) {
        #expect(HTTP1Origin.parse(url) == nil)
    }

    /// Every byte value at every offset of a 17-byte target (two words read whole, then the
    /// rest byte by byte), among bytes that are all allowed: found exactly where the rule of
    /// which bytes curl would rewrite says so.
    @Test func eachByteCurlWouldRewriteIsFoundAtAnyOffset() {
        func rewritten(_ byte: UInt8) -> Bool { byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") }
        for value in 0...255 {
            for offset in 0..<17 {
                var target = [UInt8](repeating: UInt8(ascii: "A"), count: 17)
                target[offset] = UInt8(value)
                let found = target.withUnsafeBytes { HTTP1Origin.hasByteCurlRewrites($0) }
                #expect(found == rewritten(UInt8(value)), "byte \(value) at \(offset)")
            }
        }
        // Neighbours that carry or borrow into each other: 0x7E beside 0x21, `"` and `$` (around `#`).
        let allowed = Array("~!\"$~!\"$~!".utf8)
        #expect(!allowed.withUnsafeBytes { HTTP1Origin.hasByteCurlRewrites($0) })
    }

    @Test func theRequestIsWrittenOnceWithHostHeadersAndBody() throws {
        let url = "http://127.0.0.1:8053/dns-query"
        let (origin, target) = try #require(HTTP1Origin.parse(url))
        var buffer: [UInt8] = []
        let post = UpstreamHTTPRequest(
            url: url, method: .post, headers: [HTTPHeader("Content-Type", "application/dns-message")], body: [1, 2, 3],
            timeoutMilliseconds: 1000)
        HTTP1RequestWriter.write(post, target: target, authority: origin.authority, into: &buffer)
        let expected =
            "POST /dns-query HTTP/1.1\r\nHost: 127.0.0.1:8053\r\nContent-Type: application/dns-message\r\nContent-Length: 3\r\n\r\n"
        #expect(buffer == Array(expected.utf8) + [1, 2, 3])
        let get = UpstreamHTTPRequest(url: "http://10.0.0.1", timeoutMilliseconds: 1000)
        let (plain, start) = try #require(HTTP1Origin.parse(get.url))
        HTTP1RequestWriter.write(get, target: start, authority: plain.authority, into: &buffer)
        #expect(buffer == Array("GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n".utf8))
    }
}

/// The HTTP/1.1 client's deadline order.
@Suite struct HTTP1DeadlineHeapTests {
    private func transfer(_ deadline: Int64) -> HTTP1Transfer {
        HTTP1Transfer(request: UpstreamHTTPRequest(url: "http://127.0.0.1/", timeoutMilliseconds: 1), target: 16, deadline: deadline) { _ in
        }
    }

    @Test func expiredTransfersComeOutEarliestFirstAndFinishedOnesNever() {
        var heap = HTTP1DeadlineHeap()
        let transfers = [50, 10, 40, 20, 30].map { transfer(Int64($0)) }
        for item in transfers { heap.insert(item) }
        transfers[3].finish(.failure(UpstreamError(.transport, "done")))  // deadline 20
        #expect(heap.popExpired(now: 5) == nil)
        var order: [Int64] = []
        while let next = heap.popExpired(now: 45) { order.append(next.deadline) }
        #expect(order == [10, 30, 40])
        #expect(heap.earliest == 50)
    }

    @Test func transfersFinishedLongBeforeTheirDeadlineAreSweptOut() {
        var heap = HTTP1DeadlineHeap()
        heap.insert(transfer(1))
        for index in 0..<5000 {
            // A long timeout, finished at once: only a sweep removes it (the top stays unfinished).
            let quick = transfer(1_000_000 + Int64(index))
            heap.insert(quick)
            quick.finish(.failure(UpstreamError(.transport, "done")))
        }
        #expect(heap.count < 2100)
        #expect(heap.earliest == 1)
    }
}

import Foundation
import HTTPDNSCore
import Testing

/// `Log.line` in both formats, and `LogSink`'s buffered writer.
@Suite struct LogFormatTests {
    @Test func jsonLinesAreOneObjectWithTimeLevelMessageAndFields() throws {
        let bytes = Log.line(
            .warning, "upstream \"x\" failed\nforged", fields: [("account", "shop"), ("path", "/a\\b\u{7}")],
            format: .json, time: Log.timestamp())
        #expect(bytes.last == UInt8(ascii: "\n"))
        #expect(bytes.dropLast().contains(UInt8(ascii: "\n")) == false, "one line")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String])
        #expect(object["level"] == "warning")
        #expect(object["msg"] == "upstream \"x\" failed\nforged")
        #expect(object["account"] == "shop")
        #expect(object["path"] == "/a\\b\u{7}")
        let time = try #require(object["time"])
        #expect(time.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/#) != nil, "\(time)")
    }

    @Test func textLinesEscapeAForgedNewlineAndQuoteFieldsWithSpaces() {
        let line = String(
            decoding: Log.line(
                .info, "host a\n2026-12-02T00:00:00.000Z error forged", fields: [("peer", "127.0.0.1"), ("ua", "a \"b\"")],
                format: .text, time: "2026-12-02T10:00:00.000Z"), as: UTF8.self)
        #expect(line == #"2026-12-02T10:00:00.000Z info host a\n2026-12-02T00:00:00.000Z error forged peer=127.0.0.1 ua="a \"b\"""# + "\n")
    }

    @Test func levelsAreOrdered() {
        #expect(Log.Level.debug < .info && Log.Level.info < .warning && Log.Level.warning < .error)
        #expect(Log.Level(rawValue: "warning") == .warning)
    }

    @Test func theSinkWritesEveryLineWholeAndInOrderFromManyThreads() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = LogSink(fileDescriptor: fds[1], capacity: 1 << 20)
        sink.start()
        let reader = Thread.detachNewThreadWithResult(fds[0])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<500 { sink.append(Array("t\(thread) line \(index)\n".utf8)) }
        }
        sink.stop()
        close(fds[1])
        let text = reader.wait()
        close(fds[0])
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2000)
        for thread in 0..<4 {
            let mine = lines.filter { $0.hasPrefix("t\(thread) ") }.map(String.init)
            #expect(mine == (0..<500).map { "t\(thread) line \($0)" })
        }
    }

    @Test func aFullSinkDropsLinesAndSaysHowMany() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        // Nobody reads until every line is appended: the 64 KiB pipe fills and the writer blocks,
        // so a 1 KiB buffer overflows.
        let sink = LogSink(fileDescriptor: fds[1], capacity: 1024)
        sink.start()
        for index in 0..<20_000 { sink.append(Array("line \(index) with some padding to fill the pipe quickly\n".utf8)) }
        let reader = Thread.detachNewThreadWithResult(fds[0])
        sink.stop()
        close(fds[1])
        let text = reader.wait()
        close(fds[0])
        #expect(text.contains("lines dropped"))
        #expect(text.split(separator: "\n").count < 20_000)
    }
}

extension Thread {
    /// Reads `fd` to its end on a new thread; `wait()` gives the text.
    fileprivate static func detachNewThreadWithResult(_ fd: Int32) -> PipeReader {
        let reader = PipeReader()
        Thread.detachNewThread {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                data.append(contentsOf: buffer[..<count])
            }
            reader.finish(String(decoding: data, as: UTF8.self))
        }
        return reader
    }
}

private final class PipeReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var text = ""

    func finish(_ text: String) {
        self.text = text
        done.signal()
    }

    func wait() -> String {
        done.wait()
        return text
    }
}

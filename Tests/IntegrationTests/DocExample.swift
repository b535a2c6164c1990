import Foundation
import HTTPDNSTestSupport

/// The shell examples of one Markdown page, as docs/development.md's "Documentation tests"
/// defines them: every fenced block tagged `console`, `sh`, `bash` or `shell` is either a run of
/// `$ command` lines, each followed by the output it prints, or starts with
/// `# doc-test: skip REASON`. A block whose opening fence names a file after its language
/// (```` ```c pinned.c ````) is that file's text: the page's commands find it in their directory.
struct DocPage {
    /// One `$ command` (with its `\` continuation lines) and the output shown under it.
    struct Example {
        let line: Int
        let command: String
        let expected: [String]
    }

    /// A program or file the page shows whole, written where its commands run.
    struct SourceFile {
        let line: Int
        let name: String
        let text: String
    }

    /// A shell block the page marks as not run here, with the reason it gives.
    struct Skip {
        let line: Int
        let reason: String
    }

    let path: String
    var examples: [Example] = []
    var files: [SourceFile] = []
    var skips: [Skip] = []
    /// Blocks that follow neither form: (line, what is wrong).
    var problems: [(line: Int, message: String)] = []

    static let shellLanguages: Set<String> = ["console", "sh", "bash", "shell"]
    static let skipMarker = "# doc-test: skip"

    init(path: String, text: String) {
        self.path = path
        for block in Self.fencedBlocks(text) {
            let info = block.language.split(separator: " ", omittingEmptySubsequences: true)
            if Self.shellLanguages.contains(block.language) {
                read(block)
            } else if info.count == 2, let name = Self.fileName(info[1]) {
                files.append(SourceFile(line: block.line, name: name, text: block.lines.joined(separator: "\n") + "\n"))
            } else if block.language.isEmpty, block.lines.first?.hasPrefix("$ ") == true {
                problems.append((block.line, "commands in an untagged block: tag it `console` so that it runs"))
            }
        }
    }

    /// `word` when it is a plain file name (`pinned.c`, `dial.go`): no directory, no leading dot.
    static func fileName(_ word: Substring) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard word.contains("."), !word.hasPrefix("."), word.allSatisfy(allowed.contains) else { return nil }
        return String(word)
    }

    private mutating func read(_ block: (language: String, line: Int, lines: [String])) {
        guard let first = block.lines.first(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            problems.append((block.line, "an empty shell block"))
            return
        }
        if first.hasPrefix(Self.skipMarker) {
            let reason = first.dropFirst(Self.skipMarker.count).trimmingCharacters(in: .whitespaces)
            if reason.isEmpty { problems.append((block.line, "`\(Self.skipMarker)` without a reason")) }
            skips.append(Skip(line: block.line, reason: reason))
            return
        }
        guard first.hasPrefix("$ ") else {
            problems.append((block.line, "a shell block must start with `$ command` or `\(Self.skipMarker) REASON`"))
            return
        }
        var index = 0
        while index < block.lines.count {
            let line = block.lines[index]
            guard line.hasPrefix("$ ") else {
                index += 1
                continue
            }
            let start = block.line + 1 + index
            var command = String(line.dropFirst(2))
            while command.hasSuffix("\\"), index + 1 < block.lines.count {
                index += 1
                command += "\n" + block.lines[index]
            }
            index += 1
            var expected: [String] = []
            while index < block.lines.count, !block.lines[index].hasPrefix("$ ") {
                expected.append(block.lines[index])
                index += 1
            }
            examples.append(Example(line: start, command: command, expected: expected))
        }
    }

    /// Fenced code blocks: the language after the opening fence, the fence's line number
    /// (1-based) and the lines inside, without the fence's indentation (blocks inside lists).
    static func fencedBlocks(_ text: String) -> [(language: String, line: Int, lines: [String])] {
        var blocks: [(language: String, line: Int, lines: [String])] = []
        var open: (language: String, line: Int, indent: Int, lines: [String])?
        for (number, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.drop(while: { $0 == " " })
            let indent = line.count - trimmed.count
            if trimmed.hasPrefix("```") {
                if let block = open {
                    blocks.append((block.language, block.line, block.lines))
                    open = nil
                } else {
                    open = (String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), number + 1, indent, [])
                }
            } else if open != nil {
                let strip = min(open!.indent, line.prefix(while: { $0 == " " }).count)
                open!.lines.append(String(line.dropFirst(strip)))
            }
        }
        return blocks
    }
}

/// What may differ between the output a page shows and the output a run prints: TTLs, times,
/// resolution times, ids, opaque cursors and the write-behind queue's length. Everything else is compared exactly, line by line; a line `...`
/// in the shown output stands for any number of lines.
enum DocOutput {
    private static let rules: [(NSRegularExpression, String)] = [
        (#""(ttl|TTL)":[0-9]+"#, #""$1":_"#),
        (#""(avgRtt|maxRtt)":"[0-9]+""#, #""$1":"_""#),
        (#""(failingSince|pendingChanges)":[0-9]+"#, #""$1":_"#),
        (#""next_cursor":"[^"]+""#, #""next_cursor":"_""#),
        (#"^([Xx]-[Nn]ext-[Cc]ursor): .*$"#, "$1: _"),
        (#"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z"#, "TIME"),
        (#"^([Dd]ate): .*$"#, "$1: _"),
        (#"\b1[7-9][0-9]{8}\b"#, "UNIXTIME"),
        (#"^(\S+\.)\s+[0-9]+\s+IN\s+"#, "$1 _ IN "),
        (#"\bid [0-9]+\b"#, "id _"),
        (#"(request_id=|[Xx]-[Rr]equest-[Ii]d: )[0-9a-f]{32}"#, "$1_"),
        (#"duration_ms=[0-9.]+"#, "duration_ms=_"),
    ].map { (try! NSRegularExpression(pattern: $0.0, options: [.anchorsMatchLines]), $0.1) }

    static func normalized(_ line: String) -> String {
        var text = line
        while text.hasSuffix(" ") { text.removeLast() }
        for (pattern, template) in rules {
            let range = NSRange(text.startIndex..., in: text)
            text = pattern.stringByReplacingMatches(in: text, range: range, withTemplate: template)
        }
        return text
    }

    /// Lines of `text` without the empty lines at either end. Carriage returns (HTTP heads) are
    /// dropped first: "\r\n" is one Character, which a split on "\n" would not cut.
    static func lines(_ text: String) -> [String] {
        let withoutReturns = String(decoding: text.utf8.filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        var lines = withoutReturns.components(separatedBy: "\n")
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        while lines.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeFirst() }
        return lines
    }

    /// Whether `actual` is what `expected` shows, modulo the rules above.
    static func matches(expected: [String], actual: [String]) -> Bool {
        let shown = lines(expected.joined(separator: "\n")).map(normalized)
        let printed = lines(actual.joined(separator: "\n")).map(normalized)
        return match(shown[...], printed[...])
    }

    private static func match(_ shown: ArraySlice<String>, _ printed: ArraySlice<String>) -> Bool {
        guard let first = shown.first else { return printed.isEmpty }
        if first == "..." {
            return (printed.startIndex...printed.endIndex).contains { match(shown.dropFirst(), printed[$0...]) }
        }
        guard let line = printed.first, line == first else { return false }
        return match(shown.dropFirst(), printed.dropFirst())
    }
}

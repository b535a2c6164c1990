import Foundation
import HTTPDNSTestSupport
import Testing

/// Every relative link of README.md and docs/*.md leads somewhere: the file or directory exists,
/// and a `#fragment` is the anchor of a heading of the Markdown file it points into.
@Suite("Documentation links")
struct DocLinksTests {
    @Test(arguments: DocExamplesTests.pages)
    func everyRelativeLinkResolves(page: String) throws {
        let root = TestPaths.packageRoot
        let url = root.appendingPathComponent(page)
        let text = try String(contentsOf: url, encoding: .utf8)
        let links = DocLinks.links(in: text)
        for link in links where !link.target.contains("://") && !link.target.hasPrefix("mailto:") {
            let parts = link.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let path = String(parts[0])
            let target = path.isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(path).standardized
            guard FileManager.default.fileExists(atPath: target.path) else {
                Issue.record("\(page):\(link.line): \(link.target): no file \(target.path)")
                continue
            }
            guard parts.count == 2 else { continue }
            let fragment = String(parts[1])
            guard target.pathExtension == "md" else {
                Issue.record("\(page):\(link.line): \(link.target): a fragment into a file that is not Markdown")
                continue
            }
            let anchors = DocLinks.anchors(in: try String(contentsOf: target, encoding: .utf8))
            #expect(anchors.contains(fragment), "\(page):\(link.line): \(link.target): no heading with that anchor")
        }
    }

    @Test func linksAndAnchorsAreReadAsGitHubReadsThem() {
        let text = """
            # Resolve: `GET /v1/{acct}/resolve`
            See [a](docs/api.md#errors) and `[not](a-link.md)`, ![b](x.png).
            ## Errors
            ## Errors
            ```sh
            # not a heading
            [not a link](nowhere.md)
            ```
            """
        #expect(DocLinks.links(in: text).map(\.target) == ["docs/api.md#errors", "x.png"])
        #expect(DocLinks.links(in: text).map(\.line) == [2, 2])
        #expect(DocLinks.anchors(in: text) == ["resolve-get-v1acctresolve", "errors", "errors-1"])
    }
}

/// Links and heading anchors of a Markdown page, outside code blocks and inline code.
enum DocLinks {
    private static let link = try! NSRegularExpression(pattern: #"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#)

    static func links(in text: String) -> [(line: Int, target: String)] {
        var result: [(line: Int, target: String)] = []
        for (number, line) in proseLines(text) {
            let prose = withoutInlineCode(line)
            let range = NSRange(prose.startIndex..., in: prose)
            for match in link.matches(in: prose, range: range) {
                if let target = Range(match.range(at: 1), in: prose) { result.append((number, String(prose[target]))) }
            }
        }
        return result
    }

    /// GitHub's anchors: the heading's text in lower case, without characters other than letters,
    /// digits, spaces, `-` and `_`, spaces as `-`; a repeated anchor gets `-1`, `-2`, ...
    static func anchors(in text: String) -> [String] {
        var seen: [String: Int] = [:]
        var anchors: [String] = []
        for (_, line) in proseLines(text) where line.hasPrefix("#") {
            let title = line.drop(while: { $0 == "#" })
            guard title.first == " " else { continue }
            let slug = String(
                title.trimmingCharacters(in: .whitespaces).lowercased().unicodeScalars.compactMap { scalar -> Character? in
                    if scalar == " " { return "-" }
                    if CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_" { return Character(scalar) }
                    return nil
                })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// Lines outside fenced code blocks, with their 1-based numbers.
    private static func proseLines(_ text: String) -> [(Int, String)] {
        var inFence = false
        var lines: [(Int, String)] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
            } else if !inFence {
                lines.append((index + 1, line))
            }
        }
        return lines
    }

    private static func withoutInlineCode(_ line: String) -> String {
        var result = ""
        var inCode = false
        for character in line {
            if character == "`" {
                inCode.toggle()
            } else if !inCode {
                result.append(character)
            }
        }
        return result
    }
}

import Foundation
import HTTPDNSTestSupport
import Testing

/// The shell examples of README.md and docs/*.md run against `scripts/trial.sh` (unbound, dnss
/// and httpdnsd on free loopback ports), each page against a trial of its own, and print what
/// the page shows (docs/development.md, "Documentation tests").
@Suite("Documentation examples", .serialized)
struct DocExamplesTests {
    /// README.md and every page of docs/, relative to the package root.
    static let pages: [String] = {
        let docs = TestPaths.packageRoot.appendingPathComponent("docs").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: docs)) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    /// The ports the pages show; a run's real ports are written back as these before comparing.
    static let shownHTTPPort = 8080
    static let shownDNSPort = 5353
    static let shownDoHPort = 8053

    /// At most this many shell blocks may be skipped, all pages together: a skip is the
    /// exception (a container, systemd, a command that runs until stopped), each with its reason.
    static let maximumSkips = 12

    @Test(arguments: pages)
    func everyShellExampleOfThePagePrintsWhatItShows(page: String) async throws {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent(page), encoding: .utf8)
        let parsed = DocPage(path: page, text: text)
        for problem in parsed.problems {
            Issue.record("\(page):\(problem.line): \(problem.message)")
        }
        guard !parsed.examples.isEmpty else { return }
        try await withTrial { trial in
            for file in parsed.files {
                try file.text.write(to: trial.directory.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
            }
            let outputs = try trial.run(parsed.examples.map(\.command))
            for (example, output) in zip(parsed.examples, outputs) {
                let actual = trial.showingDocumentedPorts(output)
                #expect(
                    DocOutput.matches(expected: example.expected, actual: [actual]),
                    """
                    \(page):\(example.line): $ \(example.command)
                    shown:
                    \(example.expected.joined(separator: "\n"))
                    printed:
                    \(actual)
                    """)
            }
        }
    }

    /// The trial binds and asks nothing but loopback: every address the script names is in
    /// 127.0.0.0/8, and it names no wildcard.
    @Test func theTrialNamesNoAddressButLoopback() throws {
        let script = try String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent("scripts/trial.sh"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\b[0-9]{1,3}(\.[0-9]{1,3}){3}\b"#)
        let addresses = pattern.matches(in: script, range: NSRange(script.startIndex..., in: script)).compactMap {
            Range($0.range, in: script).map { String(script[$0]) }
        }
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.hasPrefix("127.") }, "addresses in scripts/trial.sh: \(addresses)")
        #expect(!script.contains("[::]") && !script.contains("interface: ::"), "a wildcard in scripts/trial.sh")
    }

    @Test func skippedShellBlocksAreFewAndEachGivesAReason() throws {
        var skips: [String] = []
        for page in Self.pages {
            let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent(page), encoding: .utf8)
            for skip in DocPage(path: page, text: text).skips {
                #expect(!skip.reason.isEmpty, "\(page):\(skip.line): a skip without a reason")
                skips.append("\(page):\(skip.line): \(skip.reason)")
            }
        }
        #expect(skips.count <= Self.maximumSkips, "skipped shell blocks:\n\(skips.joined(separator: "\n"))")
    }

    /// The comparison itself: a shown output that drifted from what runs is caught, and only
    /// TTLs, times and ids may differ.
    @Test func aDriftedOutputIsCaughtAndOnlyTTLsTimesAndIdsMayDiffer() {
        let printed = #"{"host":"www.example.test","ips":["127.0.0.11"],"ttl":287,"origin_ttl":300}"#
        #expect(
            DocOutput.matches(
                expected: [#"{"host":"www.example.test","ips":["127.0.0.11"],"ttl":300,"origin_ttl":300}"#], actual: [printed]))
        #expect(
            !DocOutput.matches(
                expected: [#"{"host":"www.example.test","ips":["127.0.0.12"],"ttl":300,"origin_ttl":300}"#], actual: [printed]))
        #expect(
            !DocOutput.matches(
                expected: [#"{"host":"www.example.test","ips":["127.0.0.11"],"ttl":300,"origin_ttl":60}"#], actual: [printed]))
        #expect(!DocOutput.matches(expected: [], actual: [printed]), "an example that shows nothing must print nothing")
        #expect(DocOutput.matches(expected: ["first", "...", "last"], actual: ["first\nany\nlines\nlast"]))
        #expect(!DocOutput.matches(expected: ["first", "...", "last"], actual: ["first\nany"]))
        #expect(DocOutput.matches(expected: ["www.example.test. 300 IN A 127.0.0.11"], actual: ["www.example.test. 41 IN A 127.0.0.11"]))
    }

    @Test func aShellBlockIsReadAsCommandsWithTheirOutput() {
        let page = DocPage(
            path: "x.md",
            text: """
                text
                ```console
                $ curl -s "$HTTPDNS/a" \\
                       -d '{}'
                {"a":1}
                $ true
                ```
                ```sh
                # doc-test: skip needs docker
                docker run x
                ```
                ```sh
                make run
                ```
                ```
                $ untagged
                ```
                """)
        #expect(page.examples.map(\.command) == ["curl -s \"$HTTPDNS/a\" \\\n       -d '{}'", "true"])
        #expect(page.examples.map(\.expected) == [[#"{"a":1}"#], []])
        #expect(page.examples.map(\.line) == [3, 6])
        #expect(page.skips.map(\.reason) == ["needs docker"])
        #expect(page.problems.map(\.line) == [12, 15])
    }

    @Test func aBlockNamingAFileIsThatFilesText() {
        let page = DocPage(
            path: "x.md",
            text: """
                ```c pinned.c
                int main(void) {
                    return 0;
                }
                ```
                ```go ../escape.go
                package main
                ```
                ```c
                int fragment;
                ```
                """)
        #expect(page.files.map(\.name) == ["pinned.c"])
        #expect(page.files.map(\.text) == ["int main(void) {\n    return 0;\n}\n"])
        #expect(page.files.map(\.line) == [1])
    }
}

/// One `scripts/trial.sh` on free loopback ports, for the examples of one page.
struct DocTrial {
    let httpPort: UInt16
    let dnsPort: UInt16
    let dohPort: UInt16
    let token: String
    let directory: URL

    /// The environment the examples read: what the trial prints for the user to export, and
    /// the build's products (`httpdns-curl`) first on `PATH`.
    var environment: [String: String] {
        let products = URL(fileURLWithPath: TestPaths.httpdnsdBinary).deletingLastPathComponent().path
        let path = TestPaths.childEnvironment()["PATH"] ?? "/usr/bin:/bin"
        return TestPaths.childEnvironment([
            "PATH": "\(products):\(path)",
            "HTTPDNS": "http://127.0.0.1:\(httpPort)",
            "ADMIN_TOKEN": token,
            "TRIAL_UPSTREAM": "doh:http://127.0.0.1:\(dohPort)/dns-query",
            "GOPROXY": "off",
        ])
    }

    /// Runs `commands` in order in one bash (so a variable set by one is seen by the next), in
    /// a directory of its own, and returns what each printed (standard error included).
    func run(_ commands: [String]) throws -> [String] {
        let marker = "@@doc-test-\(UUID().uuidString)@@"
        var script = "exec 2>&1\ncd \(directory.path)\n"
        for command in commands {
            script += "printf '\\n%s\\n' '\(marker)'\n\(command)\n"
        }
        script += "printf '\\n%s\\n' '\(marker)'\n"
        let scriptURL = directory.appendingPathComponent("examples.sh")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        var arguments = ["120", "/bin/bash", scriptURL.path]
        arguments = ["-i"] + environment.map { "\($0.key)=\($0.value)" } + ["/usr/bin/timeout"] + arguments
        let run = try CommandRun.run("/usr/bin/env", arguments)
        let parts = run.text.components(separatedBy: "\n\(marker)\n")
        guard parts.count == commands.count + 2 else {
            throw HarnessError("the examples did not run to their end (status \(run.status)):\n\(run.text)")
        }
        return Array(parts[1...commands.count])
    }

    /// `output` with the run's ports written as the ones the pages show.
    func showingDocumentedPorts(_ output: String) -> String {
        output
            .replacingOccurrences(of: "127.0.0.1:\(httpPort)", with: "127.0.0.1:\(DocExamplesTests.shownHTTPPort)")
            .replacingOccurrences(of: "127.0.0.1:\(dnsPort)", with: "127.0.0.1:\(DocExamplesTests.shownDNSPort)")
            .replacingOccurrences(of: "127.0.0.1:\(dohPort)", with: "127.0.0.1:\(DocExamplesTests.shownDoHPort)")
    }
}

/// Starts `scripts/trial.sh` as `make trial` does, on free ports (again on new ones when a port
/// was taken meanwhile), waits until it prints its export line, runs `body` and stops the trial
/// (its Ctrl-C path: SIGTERM) on every path.
func withTrial(_ body: (DocTrial) async throws -> Void) async throws {
    let script = TestPaths.packageRoot.appendingPathComponent("scripts/trial.sh").path
    let (trial, process) = try await startRetrying(
        "scripts/trial.sh",
        launch: { () async throws -> (DocTrial, ChildProcess) in
            let directory = try TestPaths.makeTemporaryDirectory("trial")
            let trial = DocTrial(
                httpPort: freePort(), dnsPort: freePort(), dohPort: freePort(),
                token: "doc-test-\(UUID().uuidString)", directory: directory)
            let process = try await ChildProcess.launch(
                name: "trial", executable: "/bin/bash", arguments: [script],
                environment: TestPaths.childEnvironment([
                    "HTTPDNSD_BIN": TestPaths.httpdnsdBinary, "ADMIN_TOKEN": trial.token, "TMPDIR": directory.path,
                    "TRIAL_PORT": "\(trial.httpPort)", "TRIAL_DNS_PORT": "\(trial.dnsPort)",
                    "TRIAL_DOH_PORT": "\(trial.dohPort)",
                ]),
                logURL: directory.appendingPathComponent("trial.log"))
            return (trial, process)
        },
        ready: { trial, process in
            let ready = try await poll(for: 60) { () throws -> Bool? in
                guard process.isRunning else { throw HarnessError("scripts/trial.sh exited:\n\(process.output())") }
                return process.output().contains("export HTTPDNS=http://127.0.0.1:\(trial.httpPort) ") ? true : nil
            }
            guard ready == true else { throw HarnessError("scripts/trial.sh printed no export line within 60 s") }
        },
        stop: { _, process in await process.stop() })
    do {
        try await body(trial)
    } catch {
        Issue.record("scripts/trial.sh output:\n\(process.output().suffix(4000))")
        await process.stop()
        throw error
    }
    #expect(await process.stop() == 0, "the trial stops cleanly on SIGTERM:\n\(process.output().suffix(2000))")
    let left = (try? FileManager.default.contentsOfDirectory(atPath: trial.directory.path)) ?? []
    #expect(!left.contains { $0.hasPrefix("httpdnsd-trial.") }, "the trial removes its directory when stopped")
}

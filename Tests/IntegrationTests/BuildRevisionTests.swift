import Foundation
import HTTPDNSTestSupport
import Testing

/// The git revision `--version` and `httpdns_build_info` report: recorded by
/// `scripts/build-revision.sh` (run by `make`, the Dockerfile) into the ignored
/// `Sources/CBuildRevision/revision.h`.
@Suite("Build revision")
struct BuildRevisionTests {
    /// What the script records for this checkout: HEAD's 12-digit abbreviation, `-dirty` when
    /// tracked files differ from it.
    static func checkoutRevision() throws -> String {
        let root = TestPaths.packageRoot.path
        let head = try CommandRun.run("git", ["-C", root, "rev-parse", "--short=12", "HEAD"], mergingStandardError: false)
        guard head.status == 0 else { return "unknown" }
        let hash = head.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let clean = try CommandRun.run("git", ["-C", root, "diff", "--quiet", "HEAD", "--"]).status == 0
        return clean ? hash : "\(hash)-dirty"
    }

    /// Only under `make test` (which sets `HTTPDNS_BUILT_BY_MAKE`): a filtered `swift build`
    /// compiles in whatever revision was last recorded.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HTTPDNS_BUILT_BY_MAKE"] != nil))
    func binaryBuiltByMakeReportsTheCheckoutRevision() async throws {
        let revision = try Self.checkoutRevision()
        #expect(revision != "unknown", "make test runs in a git checkout")
        let version = try CommandRun.run(TestPaths.httpdnsdBinary, ["--version"])
        #expect(version.status == 0)
        #expect(version.text.contains(", revision \(revision))"), "\(version.text)")
        try await withService { _, service in
            let metrics = try await service.client.get("/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("httpdns_build_info{") }
            #expect(line?.contains("revision=\"\(revision)\"") == true, "\(line ?? "no httpdns_build_info")")
        }
    }

    /// A copy of the script and the C target's directory outside any repository.
    private static func scratchTree() throws -> URL {
        let root = try TestPaths.makeTemporaryDirectory("build-revision")
        let manager = FileManager.default
        try manager.createDirectory(at: root.appendingPathComponent("scripts"), withIntermediateDirectories: true)
        try manager.createDirectory(at: root.appendingPathComponent("Sources/CBuildRevision"), withIntermediateDirectories: true)
        try manager.copyItem(
            at: TestPaths.packageRoot.appendingPathComponent("scripts/build-revision.sh"),
            to: root.appendingPathComponent("scripts/build-revision.sh"))
        try Data().write(to: root.appendingPathComponent("Sources/CBuildRevision/revision.c"))
        return root
    }

    @Test func treeWithoutGitRecordsTheGivenRevisionElseUnknown() throws {
        let root = try Self.scratchTree()
        let script = root.appendingPathComponent("scripts/build-revision.sh").path
        let header = root.appendingPathComponent("Sources/CBuildRevision/revision.h")
        let unknown = try CommandRun.run(script, [], mergingStandardError: false)
        #expect(unknown.status == 0)
        #expect(unknown.text == "unknown\n")
        #expect(try String(contentsOf: header, encoding: .utf8) == "#define HTTPDNS_REVISION \"unknown\"\n")
        let given = try CommandRun.run(script, ["0123abcd4567"], mergingStandardError: false)
        #expect(given.text == "0123abcd4567\n")
        #expect(try String(contentsOf: header, encoding: .utf8) == "#define HTTPDNS_REVISION \"0123abcd4567\"\n")
    }

    @Test(arguments: ["a\"b", "x\\n", "a b", String(repeating: "a", count: 65)])
    func revisionThatIsNotAPlainWordIsRefusedAndNothingWritten(revision: String) throws {
        let root = try Self.scratchTree()
        let script = root.appendingPathComponent("scripts/build-revision.sh").path
        let refused = try CommandRun.run(script, [revision])
        #expect(refused.status == 2, "\(refused.text)")
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("Sources/CBuildRevision/revision.h").path))
    }
}

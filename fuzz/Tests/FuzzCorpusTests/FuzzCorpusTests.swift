import Foundation
import HTTPDNSFuzzEntries
import Testing

/// Every file of every seed corpus (`fuzz/<target>/corpus/`) through its target's entry point,
/// as `make fuzz` feeds them to libFuzzer: an input that once crashed a parser, kept in its
/// corpus, fails here if the crash comes back.
struct FuzzCorpusTests {
    /// `fuzz/`, three levels above this file (`fuzz/Tests/FuzzCorpusTests/`).
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func corpus(_ target: FuzzTarget) throws -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(target.rawValue).appendingPathComponent("corpus")
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everySeedOfTheCorpusParsesWithoutACrash(_ target: FuzzTarget) throws {
        let files = try Self.corpus(target)
        #expect(files.count >= 3, "fuzz/\(target.rawValue)/corpus holds a seed corpus")
        for file in files {
            try Data(contentsOf: file).withUnsafeBytes { target.run($0) }
        }
    }
}

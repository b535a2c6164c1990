import Foundation
import HTTPDNSTestSupport
import Testing

/// What the binary says at start-up when something is wrong: a configuration file that cannot
/// be used (named, with the real problem), and upstreams that none answer (naming the setting).
@Suite("Start-up messages")
struct StartupMessageTests {
    /// `--config` (and `HTTPDNS_CONFIG`) naming something that is not a readable JSON file: exit
    /// status 2 and a message naming the setting, the path and what is wrong with it.
    @Test func aConfigFileThatCannotBeUsedIsNamedWithItsProblem() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("config-messages")
        let invalid = directory.appendingPathComponent("invalid.json").path
        try "{\n  \"listen\": \"127.0.0.1:1\",,\n}\n".write(toFile: invalid, atomically: true, encoding: .utf8)
        let missing = directory.appendingPathComponent("missing.json").path
        let cases: [(arguments: [String], environment: [String: String], expected: String)] = [
            (["--config", "/dev/null"], [:], "--config: '/dev/null' is empty"),
            (["--config", directory.path], [:], "--config: '\(directory.path)' is a directory, not a file"),
            (["--config", missing], [:], "--config: '\(missing)' does not exist"),
            (["--config", invalid], [:], "\(invalid): is not valid JSON: line 2, column 27"),
            ([], ["HTTPDNS_CONFIG": directory.path], "HTTPDNS_CONFIG: '\(directory.path)' is a directory, not a file"),
        ]
        for (arguments, environment, expected) in cases {
            let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: arguments, environment: environment)
            #expect(status == 2, "\(arguments) \(environment): \(output)")
            #expect(output.contains("configuration error: \(expected)"), "\(arguments) \(environment): \(output)")
            #expect(!output.contains("permission") && !output.contains("NSCocoaErrorDomain"), "\(output)")
        }
    }

    /// Upstreams at a closed loopback port (what "offline" looks like): a warning before the
    /// service is ready, naming every way to set the upstreams.
    @Test func noUpstreamAnsweringIsLoggedAtStartNamingTheSetting() async throws {
        let dead = "doh:http://127.0.0.1:\(deadPort())/dns-query"
        try await withService(upstreams: { _ in [dead] }) { _, service in
            let log = service.log()
            let line = try #require(log.split(separator: "\n").first { $0.contains("start-up probe") }, "\(log)")
            #expect(line.contains(" warning "), "\(line)")
            #expect(line.contains("none of the 1 configured upstreams answered"), "\(line)")
            #expect(line.contains(dead) && line.contains("transport"), "\(line)")
            for setting in ["HTTPDNS_UPSTREAMS", "--upstreams", "\"upstreams\""] {
                #expect(line.contains(setting), "\(setting): \(line)")
            }
        }
    }

    /// An upstream that answers, even with a refusal for the probe's name, is no reason to warn.
    @Test func answeringUpstreamsAreLoggedWithoutAWarning() async throws {
        let dead = "doh:http://127.0.0.1:\(deadPort())/dns-query"
        try await withService(upstreams: { [dead, $0.dnss.upstreamSpec] }) { _, service in
            let log = service.log()
            let line = try #require(log.split(separator: "\n").first { $0.contains("start-up probe") }, "\(log)")
            #expect(line.contains(" info upstreams: 1 of 2 answered the start-up probe"), "\(line)")
            #expect(!log.contains("none of the"), "\(log)")
        }
    }
}

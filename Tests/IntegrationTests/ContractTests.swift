import Foundation
import HTTPDNSTestSupport
import Testing

/// `openapi.yaml` is valid OpenAPI 3.1 and holds for the real binary: schemathesis (one fixed
/// seed, so every run sends the same cases; bounded examples, every phase including the stateful
/// one, every check including `not_a_server_error`) checks each answer against the spec, with the
/// admin token and live loopback upstreams, in a network namespace that has nothing but loopback
/// (scripts/test/contract.sh). `make contract` runs many new seeds; `CONTRACT_SEED=<seed>` here
/// replays one of them.
@Suite("Contract")
struct ContractTests {
    /// The seed of `make test`'s run (CONTRACT_SEED in the environment takes precedence).
    static let seed = "20261204"
    static var spec: String { TestPaths.packageRoot.appendingPathComponent("openapi.yaml").path }

    @Test func theSpecIsValidOpenAPI() throws {
        let run = try CommandRun.run("openapi-spec-validator", [Self.spec])
        #expect(run.status == 0, "\(run.text.suffix(4000))")
    }

    @Test func schemathesisFindsNoDepartureFromTheSpec() async throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/contract.sh").path
        let run = try CommandRun.run(script, [TestPaths.httpdnsdBinary, "8", Self.seed])
        let text = run.text
        #expect(run.status == 0, "contract.sh failed:\n\(text.suffix(12_000))")
        #expect(text.contains("No issues found"), "\(text.suffix(4000))")
    }
}

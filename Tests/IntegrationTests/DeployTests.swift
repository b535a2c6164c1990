import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

/// The examples in `deploy/` hold: the Kubernetes manifests validate against the API schema
/// (`kubernetes-validate --strict`) and pass the Pod Security "restricted" profile with a pinned
/// image; the systemd unit is `Type=notify` and `systemd-analyze security` rates it below 2.0.
@Suite("Deploy examples")
struct DeployTests {
    static let deploy = TestPaths.packageRoot.appendingPathComponent("deploy")

    /// Runs `executable` with `arguments`; returns its status and output (stdout and stderr).
    static func run(_ executable: String, _ arguments: [String]) throws -> (Int32, String) {
        let run = try CommandRun.run(executable, arguments)
        return (run.status, run.text)
    }

    static var kubernetesManifests: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: deploy.path)) ?? []
        return names.filter { $0.hasPrefix("kubernetes") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }
            .sorted().map { deploy.appendingPathComponent($0).path }
    }

    @Test func everyKubernetesManifestValidatesStrictly() throws {
        let manifests = Self.kubernetesManifests
        #expect(!manifests.isEmpty)
        let (status, output) = try Self.run("kubernetes-validate", ["--strict", "--quiet"] + manifests)
        #expect(status == 0, "\(output)")
        let (_, listed) = try Self.run("kubernetes-validate", ["--strict"] + manifests)
        for kind in ["deployment", "statefulset", "poddisruptionbudget", "horizontalpodautoscaler", "networkpolicy"] {
            #expect(listed.contains("passed for resource \(kind)/"), "no \(kind) in deploy/: \(listed)")
        }
    }

    @Test func podsPassTheRestrictedProfileWithAPinnedImage() throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/pod_security.py").path
        let (status, output) = try Self.run("/usr/bin/python3", [script] + Self.kubernetesManifests)
        #expect(status == 0, "\(output)")
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("kubernetes.yaml"), encoding: .utf8)
        #expect(text.contains("image: registry.example.com/httpdnsd:\(BuildInfo.version)"), "the example pins this release")
    }

    @Test func systemdUnitIsNotifyTypeAndItsExposureIsBelowTwo() throws {
        let unit = Self.deploy.appendingPathComponent("httpdnsd.service").path
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        #expect(text.contains("\nType=notify\n"))
        let (_, output) = try Self.run("systemd-analyze", ["security", "--offline=yes", "--no-pager", unit])
        let match = try #require(output.firstMatch(of: #/Overall exposure level for httpdnsd\.service: (\d+\.\d+)/#), "\(output)")
        let exposure = try #require(Double(match.1))
        #expect(exposure < 2.0, "\(output)")
    }
}

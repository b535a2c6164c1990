import Foundation
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// `openapi.yaml` describes the account keys the service knows, no more and no fewer: a client
/// generated from the spec would otherwise drop a key on a GET→PUT round trip (reset it to its
/// default).
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    @Test func specAccountConfigPropertiesAreTheKeysTheServiceKnows() throws {
        let spec = TestPaths.packageRoot.appendingPathComponent("openapi.yaml").path
        let script = """
            import json, sys, yaml
            spec = yaml.safe_load(open(sys.argv[1]))
            schema = spec["components"]["schemas"]["AccountConfig"]
            print(json.dumps({"properties": sorted(schema["properties"]), "additional": schema.get("additionalProperties", True),
                              "version": spec["info"]["version"]}))
            """
        let run = try CommandRun.run("/usr/bin/python3", ["-c", script, spec], mergingStandardError: false)
        let data = run.output
        #expect(run.status == 0, "python3 with PyYAML (Debian python3-yaml) reads openapi.yaml")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let properties = Set(try #require(object["properties"] as? [String]))
        #expect(properties.subtracting(AccountConfig.keys).isEmpty, "in the spec, unknown to the service")
        #expect(AccountConfig.keys.subtracting(properties).isEmpty, "known to the service, missing from the spec")
        #expect(object["additional"] as? Bool == false)
        #expect(object["version"] as? String == BuildInfo.version, "openapi.yaml's info.version is the release --version prints")
        // Every key the admin API shows is one the spec names.
        var full = AccountConfig()
        full.rateLimit = 1
        full.rateBurst = 1
        full.accessKeyId = "a"
        full.accessKeySecret = "b"
        full.secretKey = "c"
        full.aesSecretKey = String(repeating: "0", count: 64)
        full.domains = try DomainPolicy(mode: .listed, allow: ["www.example.com"], deny: [])
        full.hostOverrides = try HostOverrides([.init(hosts: ["www.example.com"], ttl: 30, cache: false, maxStaleAge: 0)])
        full.dns64Prefix = DNS64Prefix("64:ff9b::/96")
        full.queryLog.enabled = true
        var rule = AnswerRule(name: "r", hosts: ["www.example.com"])
        rule.answer.ipv4 = [IPAddress("192.0.2.1")!]
        full.rules = try AnswerRules([rule])
        #expect(Set(full.jsonObject(redacted: true).keys) == properties)
    }
}

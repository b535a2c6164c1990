import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

/// The examples in `deploy/` hold: the Kubernetes manifests validate against the API schema
/// (`kubernetes-validate --strict`) and pass the Pod Security "restricted" profile with a pinned
/// image; the systemd unit is `Type=notify` and `systemd-analyze security` rates it below 2.0;
/// the Dockerfile's build stage gets every file the root manifest declares.
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

    /// A static check (no container engine): the Dockerfile's COPY lines, less .dockerignore,
    /// hold Package.swift and every target path it declares (scripts/test/docker_context.py).
    @Test func theImageBuildContextHoldsEveryPathTheManifestDeclares() throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/docker_context.py").path
        let (status, output) = try Self.run("/usr/bin/python3", [script, TestPaths.packageRoot.path])
        #expect(status == 0, "\(output)")
    }

    /// Every file the deployment files, scripts and the build name exists (build outputs git
    /// ignores aside): scripts/test/named_paths.py.
    @Test func everyPathTheDeploymentFilesAndScriptsNameExists() throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/named_paths.py").path
        let (status, output) = try Self.run("/usr/bin/python3", [script, TestPaths.packageRoot.path])
        #expect(status == 0, "\(output)")
    }

    /// The TLS + HTTP/2 front: Kubernetes' haproxy ConfigMap has deploy/haproxy.cfg's global,
    /// defaults and `frontend doh` sections (the file HTTP2FrontTests runs) and forwards to the
    /// pod's httpdnsd, which trusts 127.0.0.1 only and serves plain HTTP there; in the compose
    /// file the replicas trust haproxy's fixed address, which publishes 443 on the TLS frontend.
    @Test func theHTTP2FrontIsTheTestedConfigurationEverywhere() throws {
        let script = """
            import json, sys, yaml
            docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
            config = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "httpdnsd-haproxy")
            pod = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
            env = {e["name"]: e.get("value") for c in pod["containers"] if c["name"] == "httpdnsd" for e in c["env"]}
            compose = yaml.safe_load(open(sys.argv[2]))
            proxy = compose["services"]["haproxy"]
            trusted = {n: s["environment"].get("HTTPDNS_TRUSTED_PROXIES") for n, s in compose["services"].items() if n.startswith("httpdnsd")}
            print(json.dumps({"cfg": config["data"]["haproxy.cfg"], "env": env, "trusted": trusted,
                              "proxyAddress": proxy["networks"]["default"]["ipv4_address"],
                              "ports": proxy["ports"], "volumes": proxy["volumes"]}))
            """
        let files = ["kubernetes.yaml", "compose.yaml"].map { Self.deploy.appendingPathComponent($0).path }
        let (status, output) = try Self.run("/usr/bin/python3", ["-c", script] + files)
        #expect(status == 0, "\(output)")
        let facts = try TestJSON(parsing: Array(output.utf8))
        let kubernetes = try #require(facts["cfg"]?.string)
        let shipped = try DeployHaproxy.text()
        for header in ["global", "defaults", "frontend doh"] {
            #expect(DeployHaproxy.section(header, of: shipped).count > 1)
            #expect(DeployHaproxy.section(header, of: kubernetes) == DeployHaproxy.section(header, of: shipped), "\(header)")
        }
        #expect(DeployHaproxy.section("backend replicas", of: kubernetes) == ["server httpdnsd 127.0.0.1:8080"])
        #expect(facts["env"]?["HTTPDNS_TRUSTED_PROXIES"]?.string == "127.0.0.1")
        #expect(facts["env"]?["HTTPDNS_LISTEN"]?.string == "0.0.0.0:8080")

        let proxyAddress = try #require(facts["proxyAddress"]?.string)
        #expect(facts["trusted"]?.object?.count == 3)
        #expect(facts["trusted"]?.object?.values.allSatisfy { $0.string == proxyAddress } == true, "\(output)")
        #expect(facts["ports"]?.strings?.contains("443:8443") == true)
        #expect(facts["volumes"]?.strings?.contains("./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro") == true)
        #expect(facts["volumes"]?.strings?.contains("./tls:/usr/local/etc/haproxy/tls:ro") == true)
    }

    /// One image tag scheme: an image of httpdnsd is tagged with the release it is (`latest` and
    /// other versions nowhere), in the Dockerfile, deploy/, scripts/ and docs/.
    @Test func everyImageTagIsTheRelease() throws {
        let root = TestPaths.packageRoot
        var files = [root.appendingPathComponent("Dockerfile")]
        for directory in ["deploy", "scripts", "docs"] {
            let folder = root.appendingPathComponent(directory)
            let names = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
            files += names.map { folder.appendingPathComponent($0) }
        }
        var tags: [String] = []
        for file in files {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for match in text.matches(of: #/httpdnsd:(latest|\d+\.\d+[A-Za-z0-9.+-]*)/#) {
                tags.append("\(file.lastPathComponent): \(match.0)")
                #expect(match.1 == BuildInfo.version, "\(file.path) names httpdnsd:\(match.1)")
            }
        }
        #expect(tags.count >= 4, "the Dockerfile and deploy/ name the image: \(tags)")
    }
}

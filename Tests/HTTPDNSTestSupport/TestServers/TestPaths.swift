import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the harness finds the package, its scripts and the httpdnsd binary, and where it writes.
public enum TestPaths {
    /// The package root (derived from this file's path).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestServers
        .deletingLastPathComponent()  // HTTPDNSTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `scripts/test/json_responder.py`.
    public static var jsonResponderScript: URL {
        packageRoot.appendingPathComponent("scripts/test/json_responder.py")
    }

    /// The httpdnsd binary: `$HTTPDNSD_BIN`; else the `httpdnsd` built beside the running test
    /// bundle (same scratch path and configuration); else `<package root>/.build/debug/httpdnsd`.
    public static var httpdnsdBinary: String {
        if let path = ProcessInfo.processInfo.environment["HTTPDNSD_BIN"], !path.isEmpty { return path }
        if let testExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: testExecutable).deletingLastPathComponent()
                .appendingPathComponent("httpdnsd").path
            if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        }
        return packageRoot.appendingPathComponent(".build/debug/httpdnsd").path
    }

    /// The directory of this test process's files, `/tmp/httpdnsd-it-run-PID`. Created on first
    /// use, after removing the directories of earlier runs whose process is gone; the files of
    /// the last run stay for diagnostics until the next run.
    public static let runDirectory: URL = {
        let temp = URL(fileURLWithPath: NSTemporaryDirectory())
        let prefix = "httpdnsd-it-run-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temp.path)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: temp.appendingPathComponent(name))
            }
        }
        let url = temp.appendingPathComponent(prefix + String(getpid()))
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// A new empty directory in `runDirectory`, e.g. `/tmp/httpdnsd-it-run-123/unbound-1A2B3C4D`.
    public static func makeTemporaryDirectory(_ label: String) throws -> URL {
        let url = runDirectory.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// First executable named `name` in PATH or the usual sbin directories.
    public static func executable(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        for directory in directories {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw HarnessError("\(name) not found; run scripts/install-deps.sh")
    }

    /// Environment for children: only PATH, HOME and LANG of this process, plus `extra`.
    public static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        let current = ProcessInfo.processInfo.environment
        var environment: [String: String] = ["PATH": current["PATH"] ?? "/usr/bin:/bin:/usr/sbin:/sbin"]
        if let home = current["HOME"] { environment["HOME"] = home }
        environment["LANG"] = "C.UTF-8"
        // `make sanitize` (docs/sanitizers.md) sets these for the binary under test.
        for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] { environment[name] = current[name] }
        environment.merge(extra) { _, new in new }
        return environment
    }
}

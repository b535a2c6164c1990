internal import CBuildRevision

/// What this build is: `httpdnsd --version` prints it, `httpdns_build_info` labels it.
public enum BuildInfo {
    /// The release this source tree is (the API version of `openapi.yaml` follows it).
    public static let version = "1.0.0"

    /// The git revision it was built from (`1a2b3c4d5e6f`, `-dirty` appended when tracked files
    /// differed from it), as `make` or the Dockerfile recorded it; `unknown` for a build that
    /// did not record one (a plain `swift build` compiles in whatever the last `make` recorded).
    public static let revision = String(cString: httpdns_build_revision())

    /// The Swift compiler that built it (`6.3`).
    public static var swift: String {
        #if compiler(>=6.4)
            "6.4+"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #elseif compiler(>=6.1)
            "6.1"
        #else
            "6.0"
        #endif
    }

    /// One line: `httpdnsd 1.0.0 (Swift 6.3, revision 1a2b3c4d5e6f)`.
    public static var versionLine: String { "httpdnsd \(version) (Swift \(swift), revision \(revision))" }
}

// swift-tools-version:6.0
import PackageDescription

// Fuzzing (docs/fuzzing.md), a package of its own beside the service so that the root manifest
// (and the container image) holds the service only. The parsers' entry points are shared by the
// libFuzzer binary of `make fuzz` (fuzz/run.sh) and by FuzzCorpusTests, which replays every seed
// corpus in `make test` (`swift test --package-path fuzz`).
let package = Package(
    name: "httpdnsd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "httpdnsd", path: "..")],
    targets: [
        .target(
            name: "HTTPDNSFuzzEntries",
            dependencies: [.product(name: "HTTPDNSModules", package: "httpdnsd")]),
        .executableTarget(name: "httpdnsd-fuzz", dependencies: ["HTTPDNSFuzzEntries"]),
        .testTarget(name: "FuzzCorpusTests", dependencies: ["HTTPDNSFuzzEntries"]),
    ],
    swiftLanguageModes: [.v6]
)

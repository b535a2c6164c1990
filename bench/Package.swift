// swift-tools-version:6.0
import PackageDescription

// The benchmark's Swift tool, a package of its own beside the service so that the root manifest
// (and the container image) holds the service only: `cachesim`, the cache simulator (hit ratios
// of the eviction policies on synthetic workloads, bytes per entry; bench/README.md).
let package = Package(
    name: "httpdnsd-bench",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "httpdnsd", path: "..")],
    targets: [
        .executableTarget(
            name: "cachesim",
            dependencies: [.product(name: "HTTPDNSModules", package: "httpdnsd")])
    ],
    swiftLanguageModes: [.v6]
)

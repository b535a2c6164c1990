// swift-tools-version:6.0
import PackageDescription

/// Release builds optimise across our modules (generic code of one module specialised in its
/// callers), which plain `-O` does only for what is marked `@inlinable`.
let optimized: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "httpdnsd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "httpdnsd", targets: ["httpdnsd"]),
        // For the tool packages beside the service (bench/Package.swift, fuzz/Package.swift),
        // which depend on this one by path and can use its products only; not a public API.
        .library(
            name: "HTTPDNSModules",
            targets: ["HTTPDNSCore", "HTTPDNSConfig", "HTTPDNSServer", "HTTPDNSStore", "HTTPDNSUpstream", "HTTPDNSWire"]),
        .library(name: "HTTPDNSClient", targets: ["HTTPDNSClient"]),
        .executable(name: "httpdns-curl", targets: ["httpdns-curl"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages; each module.modulemap points at a shim.h.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CAres", pkgConfig: "libcares", providers: [.apt(["libc-ares-dev"])]),
        .systemLibrary(name: "CMaxMindDB", pkgConfig: "libmaxminddb", providers: [.apt(["libmaxminddb-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CKnot", pkgConfig: "libknot", providers: [.apt(["libknot-dev"])]),
        // sys/epoll.h for the event loops (Glibc's module lacks it).
        .systemLibrary(name: "CEpoll"),
        // malloc.h for returning freed heap to the kernel (Glibc's module lacks it).
        .systemLibrary(name: "CMalloc"),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM prohibits (the headers are in /usr/include).
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CFstrm", pkgConfig: "libfstrm", providers: [.apt(["libfstrm-dev"])]),

        // The git revision compiled in (scripts/build-revision.sh writes its ignored revision.h).
        .target(name: "CBuildRevision"),
        // `Mutex.withLock` told to ThreadSanitizer, in `make tsan` builds only (docs/sanitizers.md).
        .target(name: "HTTPDNSLocks", swiftSettings: optimized),
        .target(name: "HTTPDNSCore", dependencies: ["CBuildRevision", "CMalloc", "HTTPDNSLocks"], swiftSettings: optimized),
        // What the daemon is started with (docs/configuration.md): its file, variables and flags,
        // listeners, TLS files and log format. The engines see only Core's AccountConfig.
        .target(name: "HTTPDNSConfig", dependencies: ["HTTPDNSCore"], swiftSettings: optimized),
        // Digests, MACs and AEAD from libcrypto, for signatures made (upstreams) and checked (clients).
        .target(name: "HTTPDNSCrypto", dependencies: ["COpenSSL"], swiftSettings: optimized),
        // DNS messages (RFC 1035) read and written by libknot, for RFC 8484 and the upstreams' replies.
        .target(name: "HTTPDNSWire", dependencies: ["CKnot"], swiftSettings: optimized),
        // What every event-loop thread shares: its work queue, wake-up pipe, epoll set and system-call checks.
        .target(name: "HTTPDNSLoop", dependencies: ["CEpoll", "HTTPDNSLocks"], swiftSettings: optimized),
        .target(
            name: "HTTPDNSUpstream", dependencies: ["HTTPDNSCore", "HTTPDNSCrypto", "HTTPDNSWire", "HTTPDNSLoop", "CCurl", "CAres"],
            swiftSettings: optimized),
        // Redis (docs/redis.md): hiredis connections on their own event loops, and the shared answer tier.
        .target(name: "HTTPDNSRedis", dependencies: ["HTTPDNSCore", "HTTPDNSLoop", "CHiredis"], swiftSettings: optimized),
        .target(name: "HTTPDNSStore", dependencies: ["HTTPDNSCore", "CSQLite"], swiftSettings: optimized),
        // The query log streamed as dnstap over Frame Streams (libfstrm), docs/querylog.md.
        .target(name: "HTTPDNSTap", dependencies: ["HTTPDNSCore", "HTTPDNSWire", "CFstrm"], swiftSettings: optimized),
        // The geo and ASN databases of `rules` conditions (docs/rules.md), read with libmaxminddb.
        .target(name: "HTTPDNSGeo", dependencies: ["HTTPDNSCore", "CMaxMindDB"], swiftSettings: optimized),
        .target(
            name: "HTTPDNSServer", dependencies: ["HTTPDNSCore", "HTTPDNSCrypto", "HTTPDNSWire", "HTTPDNSLoop", "CMicroHTTPD"],
            swiftSettings: optimized),
        .executableTarget(
            name: "httpdnsd",
            dependencies: [
                "HTTPDNSCore", "HTTPDNSConfig", "HTTPDNSUpstream", "HTTPDNSStore", "HTTPDNSServer", "HTTPDNSRedis", "HTTPDNSTap", "HTTPDNSGeo",
                "HTTPDNSLoop",
            ],
            swiftSettings: optimized
        ),
        .target(name: "HTTPDNSTestSupport", dependencies: ["HTTPDNSCore", "HTTPDNSLoop"], path: "Tests/HTTPDNSTestSupport"),
        .testTarget(name: "HTTPDNSCryptoTests", dependencies: ["HTTPDNSCrypto"]),
        .testTarget(name: "HTTPDNSWireTests", dependencies: ["HTTPDNSWire"]),
        .testTarget(name: "HTTPDNSCoreTests", dependencies: ["HTTPDNSCore", "HTTPDNSTestSupport"]),
        .testTarget(name: "HTTPDNSConfigTests", dependencies: ["HTTPDNSConfig", "HTTPDNSCore", "HTTPDNSTestSupport"]),
        .testTarget(name: "HTTPDNSUpstreamTests", dependencies: ["HTTPDNSUpstream", "HTTPDNSLoop", "HTTPDNSWire", "HTTPDNSTestSupport"]),
        .testTarget(name: "HTTPDNSRedisTests", dependencies: ["HTTPDNSRedis", "HTTPDNSCore", "HTTPDNSLoop", "HTTPDNSTestSupport"]),
        .testTarget(name: "HTTPDNSStoreTests", dependencies: ["HTTPDNSStore", "HTTPDNSTestSupport"]),
        .testTarget(name: "HTTPDNSTapTests", dependencies: ["HTTPDNSTap", "HTTPDNSCore"]),
        .testTarget(name: "HTTPDNSServerTests", dependencies: ["HTTPDNSServer", "HTTPDNSCore", "HTTPDNSWire", "HTTPDNSTestSupport"]),
        .testTarget(name: "IntegrationTests", dependencies: ["HTTPDNSTestSupport", "HTTPDNSWire"]),

        // The client side (docs/clients.md): a Foundation-only resolver library for Swift apps
        // (HMAC and AES-GCM from CryptoKit on Apple platforms, from HTTPDNSCrypto's libcrypto elsewhere), and
        // httpdns-curl, a curl-like tool that connects by IP while Host, SNI and verification keep the name.
        .target(name: "HTTPDNSClient", dependencies: [.target(name: "HTTPDNSCrypto", condition: .when(platforms: [.linux]))]),
        .executableTarget(name: "httpdns-curl", dependencies: ["HTTPDNSClient", "CCurl"]),
        .testTarget(name: "HTTPDNSClientTests", dependencies: ["HTTPDNSClient", "HTTPDNSTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

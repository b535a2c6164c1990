import Foundation
import HTTPDNSCore

@testable import HTTPDNSConfig

/// Runs `ServiceConfig.load` against in-memory files and records which files were read.
struct ConfigLoading {
    var files: [String: String] = [:]

    struct MissingFile: Error {}

    /// The configuration, or nil when the invocation asked for help.
    func config(_ arguments: [String] = [], env: [String: String] = [:]) throws(ConfigError) -> ServiceConfig? {
        let invocation = try ServiceConfig.load(arguments: arguments, environment: env) { path in
            guard let text = files[path] else { throw MissingFile() }
            return Data(text.utf8)
        }
        guard case .run(let config) = invocation else { return nil }
        return config
    }

    /// The error `load` throws, or nil when it succeeds.
    func error(_ arguments: [String] = [], env: [String: String] = [:]) -> ConfigError? {
        do {
            _ = try config(arguments, env: env)
            return nil
        } catch {
            return error
        }
    }

    /// Loading a single config file given as `--config /etc/httpdnsd.json`.
    static func file(_ json: String) -> ConfigLoading { ConfigLoading(files: ["/etc/httpdnsd.json": json]) }

    /// The error a file with `json` gives.
    static func fileError(_ json: String) -> ConfigError? {
        file(json).error(["--config", "/etc/httpdnsd.json"])
    }
}

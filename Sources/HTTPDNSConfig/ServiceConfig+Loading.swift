import Foundation
import HTTPDNSCore

/// Building a configuration from the command line, the environment and the config file.
extension ServiceConfig {
    /// What the command line asked for.
    public enum Invocation: Sendable, Equatable {
        case run(ServiceConfig)
        case help(String)
        /// `--version`: the line to print.
        case version(String)
    }

    /// Builds the configuration from `arguments` (without the program name), `environment` and
    /// the file named by `--config` / `HTTPDNS_CONFIG`, read through `readFile`.
    public static func load(
        arguments: [String], environment: [String: String], readFile: (String) throws -> Data
    ) throws(ConfigError) -> Invocation {
        var flags: [(Setting, String, String)] = []
        var configPath = environment["HTTPDNS_CONFIG"]
        var configKey = "HTTPDNS_CONFIG"
        var index = 0
        let all = settings + defaultAccountSettings
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--help" || argument == "-h" { return .help(helpText) }
            if argument == "--version" { return .version(BuildInfo.versionLine) }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            let setting = all.first(where: { $0.flag == name })
            guard setting != nil || name == "--config" else {
                throw ConfigError(key: argument, "unknown option (see --help)")
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw ConfigError(key: name, "needs a value") }
                value = arguments[index]
            }
            if let setting {
                flags.append((setting, value!, name))
            } else {
                configPath = value
                configKey = "--config"
            }
            index += 1
        }

        var config = ServiceConfig()
        if let configPath {
            let data: Data
            do { data = try readFile(configPath) } catch {
                throw ConfigError(key: configKey, readProblem(error, path: configPath))
            }
            config = try ServiceConfig(json: try parseJSONObject(data, key: configPath))
        }
        let declaredDefault = config.accounts["default"] != nil
        var defaultAccountNames: [String] = []
        for setting in all {
            guard let value = environment[setting.env] else { continue }
            try setting.apply(&config, value, setting.env)
            if setting.key != "upstreams" && defaultAccountSettings.contains(where: { $0.env == setting.env }) {
                defaultAccountNames.append(setting.env)
            }
        }
        for (setting, value, name) in flags {
            try setting.apply(&config, value, name)
            if defaultAccountSettings.contains(where: { $0.flag == setting.flag }) { defaultAccountNames.append(name) }
        }
        // Fallback settings alone must not conjure a `default` account out of nothing: it would
        // resolve through the public default upstreams.
        if !declaredDefault, let created = config.accounts["default"], created.upstreams == AccountConfig.publicDefaultUpstreams,
            let name = defaultAccountNames.first
        {
            throw ConfigError(
                key: name,
                "applies to the 'default' account, which the config file does not declare (declare it, or set HTTPDNS_UPSTREAMS / --upstreams too)"
            )
        }
        try config.validateListeners()
        try config.readAdminTokenFile(readFile)
        return .run(config)
    }

    /// What went wrong reading `path`: `ConfigFile.read` says it with the path; another reader's
    /// error is named after it.
    static func readProblem(_ error: any Error, path: String) -> String {
        (error as? ConfigFile.ReadError)?.description ?? "cannot read '\(path)': \(error.localizedDescription)"
    }

    /// Sets `adminToken` from `adminTokenFile`, if one is named: its text without one trailing
    /// newline (`\n` or `\r\n`), at least 8 characters. The error names the key that set the file
    /// and never holds the file's content.
    mutating func readAdminTokenFile(_ readFile: (String) throws -> Data) throws(ConfigError) {
        guard let path = adminTokenFile else { return }
        let key = adminTokenFileKey
        guard adminToken == nil else {
            throw ConfigError(key: key, "set either the admin token or a file holding it, not both")
        }
        let data: Data
        do { data = try readFile(path) } catch {
            throw ConfigError(key: key, Self.readProblem(error, path: path))
        }
        guard var token = String(data: data, encoding: .utf8) else {
            throw ConfigError(key: key, "'\(path)' is not UTF-8 text")
        }
        // "\r\n" is one Character: removing the last one removes either ending whole.
        if token.hasSuffix("\n") || token.hasSuffix("\r\n") { token.removeLast() }
        guard token.count >= 8 else { throw ConfigError(key: key, "'\(path)' holds fewer than 8 characters") }
        guard !token.contains(where: { $0.isNewline }) else {
            throw ConfigError(key: key, "'\(path)' holds more than one line")
        }
        adminToken = token
    }

    /// The service configuration from a decoded config file.
    public init(json object: [String: Any]) throws(ConfigError) {
        let reader = JSONObjectReader(object, path: "")
        try reader.checkKeys(Set(Self.settings.map(\.key)).union(["accounts"]))
        for setting in Self.settings {
            guard let raw = object[setting.key] else { continue }
            let text: String
            if let items = raw as? [Any], let applyList = setting.applyList {
                try applyList(&self, items, setting.key)
                continue
            } else if let string = raw as? String {
                text = string
            } else if setting.applyList == nil, let number = raw as? NSNumber, String(cString: number.objCType) != "c" {
                // JSONSerialization decodes true/false as NSNumber of ObjC type "c": not a number here.
                text = number.stringValue
            } else if setting.acceptsBool, let number = raw as? NSNumber, String(cString: number.objCType) == "c" {
                text = number.boolValue ? "true" : "false"
            } else {
                throw ConfigError(
                    key: setting.key,
                    setting.applyList == nil ? "must be a string or a number" : "must be an array of strings or a comma-separated string")
            }
            try setting.apply(&self, text, setting.key)
        }
        if let accounts = try reader.object("accounts") {
            guard !accounts.isEmpty else { throw ConfigError(key: "accounts", "declares no account") }
            self.accounts = [:]
            for (id, value) in accounts {
                guard AccountID(id) != nil else { throw ConfigError(key: "accounts.\(id)", AccountID.rule) }
                guard let body = value as? [String: Any] else { throw ConfigError(key: "accounts.\(id)", "must be a JSON object") }
                self.accounts[id] = try AccountConfig(json: body, path: "accounts.\(id)")
            }
        }
    }

    /// What `--help` prints: every flag with its environment variable, then the account keys.
    public static var helpText: String {
        var lines = [
            "httpdnsd: a self-hosted HTTPDNS service",
            "",
            "usage: httpdnsd [--config FILE] [options]",
            "",
            "Settings come from the JSON file, then HTTPDNS_* environment variables, then flags.",
            "",
        ]
        func line(_ flag: String, _ help: String) -> String {
            "  " + flag.padding(toLength: 35, withPad: " ", startingAt: 0) + "  " + help
        }
        lines.append(line("--config FILE", "JSON config file (env HTTPDNS_CONFIG)"))
        for setting in settings + defaultAccountSettings {
            lines.append(line("\(setting.flag) VALUE", setting.help + " (env \(setting.env))"))
        }
        lines += [
            line("--version", "print the version and exit"),
            line("-h, --help", "this text"),
            "",
            "Accounts are declared under \"accounts\" in the file; keys of an account:",
            "  " + AccountConfig.keys.sorted().joined(separator: ", "),
            "Without a file there is one account, \"default\", whose upstreams are Alibaba Public DNS",
            "(json:https://223.5.5.5/resolve, json:https://223.6.6.6/resolve) with the system resolver as fallback.",
            "",
            "Exit codes: 0 after a clean stop (SIGTERM, SIGINT); 1 when the database cannot be opened or an",
            "address cannot be bound; 2 for a bad configuration; 3 when the database was written by a newer httpdnsd.",
        ]
        return lines.joined(separator: "\n")
    }
}

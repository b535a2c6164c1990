import Foundation

/// One account as replicas share it: its id, a version and its configuration, or a
/// tombstone (`config` nil) for a deleted account.
///
/// Versions come from one counter in Redis, so every admin change has its own, higher than
/// every change before it; 0 stands for an account that was never written through Redis (a
/// configuration-file account, or one stored before Redis was configured): it is only seeded
/// into Redis when Redis has no record of the account.
///
/// The same text is the Redis record, the published message and what a replica keeps in its
/// own SQLite `accounts` row: `{"version":7,"id":"shop","config":{...}}` or
/// `{"version":8,"id":"shop","deleted":true}`. It holds the secrets (client keys,
/// `aesSecretKey`): never log it.
public struct AccountRecord: Sendable, Equatable {
    public var id: String
    public var version: Int64
    /// Nil for a deleted account.
    public var config: AccountConfig?

    public init(id: String, version: Int64, config: AccountConfig?) {
        self.id = id
        self.version = version
        self.config = config
    }

    public var isDeleted: Bool { config == nil }

    /// The record's text (`version` first).
    public func encoded() throws(ConfigError) -> String {
        "{\"version\":\(version)," + (try body())
    }

    /// The text after `{"version":N,`: the record without its version, which Redis's write
    /// script completes with the version it assigns. Ends with the closing brace.
    public func body() throws(ConfigError) -> String {
        // Account ids are letters, digits, '-' and '_': nothing to escape.
        guard AccountID(id) != nil else { throw ConfigError(key: "id", AccountID.rule) }
        var text = "\"id\":\"" + id + "\","
        if let config {
            text += "\"config\":" + (try config.jsonText(redacted: false)) + "}"
        } else {
            text += "\"deleted\":true}"
        }
        return text
    }

    /// Reads a record's text. `where` names its origin in errors (`redis`, `database`), which
    /// never quote the text: it holds secrets.
    public init(decoding text: String, where origin: String) throws(ConfigError) {
        let object = try parseJSONObject(Data(text.utf8), key: "\(origin) account record")
        guard let record = try Self.record(object, origin: origin) else {
            throw ConfigError(key: "\(origin) account record", "has no \"version\" and \"id\"")
        }
        self = record
    }

    /// What one row of the local `accounts` table holds: a record (written by a replica), or,
    /// for a row written without Redis, a bare configuration (version 0).
    public static func stored(id: String, json: String) throws(ConfigError) -> AccountRecord {
        let object = try parseJSONObject(Data(json.utf8), key: "database account \(id)")
        if let record = try record(object, origin: "database") {
            guard record.id == id else {
                throw ConfigError(key: "database account \(id)", "holds the record of account '\(record.id)'")
            }
            return record
        }
        return AccountRecord(id: id, version: 0, config: try AccountConfig(json: object, path: "database account \(id)"))
    }

    /// A record when `object` is one (it has `version` and `id`, keys no configuration has);
    /// nil for anything else.
    private static func record(_ object: [String: Any], origin: String) throws(ConfigError) -> AccountRecord? {
        guard object["version"] != nil, object["id"] != nil else { return nil }
        let key = "\(origin) account record"
        guard let number = object["version"] as? NSNumber, let version = Int64(exactly: number.doubleValue), version >= 0,
            String(cString: number.objCType) != "c"
        else {
            throw ConfigError(key: key, "\"version\" must be a whole number ≥ 0")
        }
        guard let id = object["id"] as? String, AccountID(id) != nil else {
            throw ConfigError(key: key, "\"id\" must be an account id")
        }
        let known: Set<String> = ["version", "id", "config", "deleted"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigError(key: key, "unknown key '\(unknown)'")
        }
        switch (object["config"], object["deleted"]) {
        case (let config as [String: Any], nil):
            return AccountRecord(id: id, version: version, config: try AccountConfig(json: config, path: "\(key) \(id)"))
        case (nil, let deleted as NSNumber) where String(cString: deleted.objCType) == "c" && deleted.boolValue:
            return AccountRecord(id: id, version: version, config: nil)
        default:
            throw ConfigError(key: key, "needs either \"config\" (an object) or \"deleted\": true")
        }
    }
}

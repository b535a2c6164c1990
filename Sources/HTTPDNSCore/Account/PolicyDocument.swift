import Foundation

/// The tenant's policy document (`GET`/`PUT /v1/{account}/policy`, docs/policy.md): the
/// account's `AccountConfig.policyKeys` as one JSON object, each key the account sets (one left
/// out has its default). Read and validated by `AccountConfig.init(json:)`, as the account file
/// and the admin API are; the other keys of the account (upstreams, limits, client keys) are
/// neither shown nor changed through it.
public enum PolicyDocument {
    /// The document of `config` in canonical form (keys sorted, no whitespace; a key at its
    /// default left out, as the account file leaves it out): the same configuration gives the
    /// same text on every replica, which its `ETag` is made from.
    public static func text(of config: AccountConfig) throws(ConfigError) -> String {
        let all = config.jsonObject(redacted: false)
        var object: [String: Any] = [:]
        for key in AccountConfig.policyKeys { object[key] = all[key] }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ConfigError(key: "", "the account's policy cannot be written as JSON: \(error)")
        }
    }

    /// `config` with its policy replaced by the document `body`: each policy key takes the
    /// body's value, or its default when the body leaves it out; every other key
    /// stays as it is. Throws naming the bad key (`hostOverrides[0].hosts[1]`) and where it is in
    /// the body (line and column), for a body that is not a JSON object, holds a key that is not a
    /// policy key, or a value the account file would refuse.
    public static func applying(_ body: [UInt8], to config: AccountConfig) throws(ConfigError) -> AccountConfig {
        let object = try parseJSONObject(Data(body), key: "body")
        if let unknown = object.keys.sorted().first(where: { !AccountConfig.policyKeys.contains($0) }) {
            throw located(
                ConfigError(
                    key: unknown,
                    "is not a key of the policy document (it holds \(AccountConfig.policyKeys.joined(separator: ", ")))"),
                in: body)
        }
        var reset = config
        for key in AccountConfig.policy { key.reset(&reset) }
        do {
            return try AccountConfig(json: object, base: reset, path: "")
        } catch {
            throw located(error, in: body)
        }
    }

    /// `error` with the line and column of the value its key names in `body` (the closest
    /// enclosing value when that key is absent): `hostOverrides[0].ttl: must be ... (line 3,
    /// column 12)`.
    static func located(_ error: ConfigError, in body: [UInt8]) -> ConfigError {
        guard let (line, column) = JSONTextCheck.position(ofValueAt: error.key, in: body) else { return error }
        return ConfigError(key: error.key, "\(error.message) (line \(line), column \(column))")
    }
}

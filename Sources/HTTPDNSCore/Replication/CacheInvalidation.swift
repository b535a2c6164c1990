import Foundation

/// A cache change made on one replica that every other replica repeats: an
/// eviction of one host or of the whole account cache, or a preload. Published through Redis
/// as `{"origin":"…","account":"shop","evict":"www.example.com"}`, `{…,"evictAll":true}` or
/// `{…,"preload":["a.example"],"families":["A","AAAA"],"network":""}`.
public struct CacheInvalidation: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        case evict(HostName)
        case evictAll
        /// Resolve these hosts (for `network`, with `ispEnable`) so every replica holds them.
        case preload(hosts: [HostName], families: [RecordFamily], network: String)
    }

    /// The replica that made the change (it does not repeat its own).
    public var origin: String
    public var account: String
    public var change: Change

    public init(origin: String, account: String, change: Change) {
        self.origin = origin
        self.account = account
        self.change = change
    }

    public func encoded() throws(ConfigError) -> String {
        var object: [String: Any] = ["origin": origin, "account": account]
        switch change {
        case .evict(let host): object["evict"] = host.value
        case .evictAll: object["evictAll"] = true
        case .preload(let hosts, let families, let network):
            object["preload"] = hosts.map(\.value)
            object["families"] = families.map(\.typeName)
            object["network"] = network
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ConfigError(key: "invalidation", "cannot be written as JSON: \(error)")
        }
    }

    public init(decoding text: String) throws(ConfigError) {
        let key = "redis invalidation"
        let object = try parseJSONObject(Data(text.utf8), key: key)
        guard let origin = object["origin"] as? String, !origin.isEmpty else { throw ConfigError(key: key, "needs \"origin\"") }
        guard let account = object["account"] as? String, AccountID(account) != nil else {
            throw ConfigError(key: key, "needs \"account\", an account id")
        }
        let known: Set<String> = ["origin", "account", "evict", "evictAll", "preload", "families", "network"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigError(key: key, "unknown key '\(unknown)'")
        }
        if let text = object["evict"] as? String, object["preload"] == nil, object["evictAll"] == nil {
            guard let host = HostName(text) else { throw ConfigError(key: key, "\"evict\" is not a host name") }
            self.init(origin: origin, account: account, change: .evict(host))
        } else if object["evictAll"] as? Bool == true, object["evict"] == nil, object["preload"] == nil {
            self.init(origin: origin, account: account, change: .evictAll)
        } else if let list = object["preload"] as? [String], let names = object["families"] as? [String],
            let network = object["network"] as? String, object["evict"] == nil, object["evictAll"] == nil
        {
            let hosts = list.compactMap(HostName.init)
            let families = names.compactMap { name in RecordFamily.allCases.first { $0.typeName == name } }
            guard hosts.count == list.count, !hosts.isEmpty, families.count == names.count, !families.isEmpty else {
                throw ConfigError(key: key, "\"preload\" needs host names and \"families\" A or AAAA")
            }
            self.init(origin: origin, account: account, change: .preload(hosts: hosts, families: families, network: network))
        } else {
            throw ConfigError(
                key: key, "needs exactly one of \"evict\", \"evictAll\": true, or \"preload\" with \"families\" and \"network\"")
        }
    }
}

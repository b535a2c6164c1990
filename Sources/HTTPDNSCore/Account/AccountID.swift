/// A valid account id: 1-64 ASCII letters, digits, '-' or '_', and not one of `reserved`.
/// The config file, the admin API and the records replicas share all check ids through it, so
/// an id one of them accepts is accepted by the others, and ids need no escaping in JSON text,
/// Redis keys or paths.
public struct AccountID: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    /// Ids no account may take: they are the first segment of other routes (`/v1/...`,
    /// `/healthz`, the DoH paths), or the admin API's `accounts`, and `/{account}/...` (the EMAS
    /// API) would collide with them. Compared case-sensitively, as paths are.
    public static let reserved: Set<String> = ["accounts", "v1", "resolve", "dns-query", "healthz", "readyz", "metrics"]

    /// What `init` checks, as the config and the admin API tell it when they refuse an id.
    public static let rule =
        "account ids are 1-64 letters, digits, '-' or '_', and not one of the ids reserved for other routes ("
        + reserved.sorted().joined(separator: ", ") + ")"

    /// Returns nil when `text` breaks the rule (`rule`).
    public init?(_ text: some StringProtocol) {
        let valid =
            !text.isEmpty && !Self.reserved.contains(String(text)) && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        guard valid else { return nil }
        value = String(text)
    }

    public var description: String { value }
}

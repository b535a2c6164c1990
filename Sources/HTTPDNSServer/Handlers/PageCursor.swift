/// The opaque `cursor` of the paged reads (`GET /v1/{account}/cache`, `/stats`): a position in
/// numbers, bound to the endpoint, the account and any filter by a check value, so that a cursor
/// from another account, another endpoint or edited by hand is a 400 rather than a silent jump.
/// The check is not a secret (a client could forge one); it only catches mistakes. Positions
/// never reveal a key. Text: `<kind>1.<n>.<n>...~<8 hex digits>`.
struct PageCursor {
    /// Slots a page may look at: free slots left by removals are skipped, but never more than
    /// this many, so a page may be short before `next_cursor` is null.
    static func scanLimit(_ limit: Int) -> Int { max(8 * limit, 4096) }

    /// Which walk the numbers belong to.
    enum Kind: String {
        case cache = "c"
        case stats = "s"
        case statsDomain = "d"
        /// `GET /v1/{account}/querylog`: the row id the next page starts before.
        case queryLog = "q"
    }

    static func encode(_ kind: Kind, account: String, filter: String = "", _ numbers: [Int]) -> String {
        let body = kind.rawValue + "1." + numbers.map(String.init).joined(separator: ".")
        return body + "~" + hex(check(body, account: account, filter: filter))
    }

    /// The numbers of `text`, or nil when it was not made by `encode` for this kind, account and
    /// filter, or does not hold `count` non-negative numbers of at most `maximum`.
    static func decode(
        _ text: String, _ kind: Kind, account: String, filter: String = "", count: Int, maximum: Int = Int(Int32.max)
    ) -> [Int]? {
        guard let tilde = text.lastIndex(of: "~") else { return nil }
        let body = String(text[..<tilde])
        guard text[text.index(after: tilde)...] == hex(check(body, account: account, filter: filter)),
            body.hasPrefix(kind.rawValue + "1.")
        else { return nil }
        let parts = body.dropFirst(kind.rawValue.count + 2).split(separator: ".", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { part in Int(part).flatMap { $0 >= 0 && $0 <= maximum ? $0 : nil } }
        return numbers.count == count && parts.count == count ? numbers : nil
    }

    /// 32-bit FNV-1a of the cursor's body, the account and the filter, separated by a byte no
    /// account id or host name holds.
    private static func check(_ body: String, account: String, filter: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in body.utf8 + [0] + account.utf8 + [0] + filter.utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return hash
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

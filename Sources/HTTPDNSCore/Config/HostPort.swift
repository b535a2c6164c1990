/// A `host:port` or `[IPv6]:port` value of the configuration, split into its parts (not checked:
/// each caller says which hosts and ports it takes).
package struct HostPort {
    /// Why a value does not split.
    package enum Problem: Error {
        /// `[` without `]:` after the address.
        case notBracketedWithPort
        /// No `:` at all.
        case noPort
    }

    package let host: Substring
    package let port: Substring
    /// The host was written in brackets (`[2001:db8::1]:53`).
    let bracketed: Bool

    /// The host before the last `:`, or inside the brackets before `]:`.
    package static func split<Text: StringProtocol>(_ text: Text) -> Result<HostPort, Problem> where Text.SubSequence == Substring {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(.notBracketedWithPort)
            }
            return .success(
                HostPort(
                    host: text[text.index(after: text.startIndex)..<close], port: text[text.index(close, offsetBy: 2)...], bracketed: true))
        }
        guard let colon = text.lastIndex(of: ":") else { return .failure(.noPort) }
        return .success(HostPort(host: text[..<colon], port: text[text.index(after: colon)...], bracketed: false))
    }
}

import HTTPDNSCore

/// The account a DoT connection answers for, from the name the client asked for in its TLS
/// handshake (Server Name Indication) and `dotAccountDomain`: with the domain `dot.example.net`,
/// `acme.dot.example.net` is the account `acme` (one label before the domain, exactly as sent:
/// account ids are case-sensitive, the domain is not); any other name, or none, is `default`.
/// Whether the account exists is the answer's business (REFUSED when it does not).
enum DoTAccountName {
    static let fallback = "default"

    static func account(serverName: String?, domain: String?) -> String {
        guard let serverName, let domain, !domain.isEmpty else { return fallback }
        let name = serverName.hasSuffix(".") ? serverName.dropLast() : Substring(serverName)
        let suffix = "." + domain.lowercased()
        guard name.count > suffix.count, name.lowercased().hasSuffix(suffix) else { return fallback }
        let label = name.dropLast(suffix.count)
        guard !label.contains("."), let id = AccountID(label) else { return fallback }
        return id.value
    }
}

/// When a DoT connection is cut, from where it is (`ReadDeadline.Phase`) and since when (all
/// times in milliseconds of one monotonic clock):
///
/// - `opening` (accepted; the TLS handshake and the first query not yet read whole) and
///   `reading` (part of a query read, the rest not yet): cut as slow after `readTimeout`.
/// - `idle` (nothing in flight, nothing half read): closed after `idleTimeout`.
/// - `handling` (queries in flight): no deadline; the engine answers within its own.
/// - In any phase, responses waiting to be written for `readTimeout` without the client taking
///   a byte of them: cut as slow (a client that sends and never reads).
///
/// `readTimeout` 0 means no read deadline (as `requestReadTimeout` 0 for HTTP).
struct DoTTimeouts: Sendable, Equatable {
    enum Cut: String, Sendable, CaseIterable {
        case idle, slow
    }

    var idleTimeout: Int
    var readTimeout: Int

    /// What is due for a connection in `phase` since `since`, whose pending output (if any) has
    /// not moved since `stalledSince`.
    func cut(phase: ReadDeadline.Phase, since: Int, stalledSince: Int?, now: Int) -> Cut? {
        if readTimeout > 0, let stalledSince, now - stalledSince >= readTimeout { return .slow }
        switch phase {
        case .opening, .reading: return readTimeout > 0 && now - since >= readTimeout ? .slow : nil
        case .idle: return now - since >= idleTimeout ? .idle : nil
        case .handling: return nil
        }
    }

    /// The phase of a connection that has read a whole query before (`gotQuery`), has
    /// `partial` bytes of the next one (and whether they make a whole one held back), and
    /// `inFlight` queries unanswered.
    static func phase(gotQuery: Bool, partial: Bool, wholeWaiting: Bool, inFlight: Int) -> ReadDeadline.Phase {
        if !gotQuery { return .opening }
        if partial && !wholeWaiting { return .reading }
        return inFlight > 0 || wholeWaiting ? .handling : .idle
    }
}

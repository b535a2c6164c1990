/// Which accounts `/metrics` shows series of, labelled `account` (`metricsAccounts`). The totals
/// without the label are always there.
public enum MetricsAccounts: String, Sendable, CaseIterable {
    /// Every account.
    case all
    /// Accounts that looked something up since the previous scrape of the operations listener.
    case active
    /// None: totals only.
    case none
}

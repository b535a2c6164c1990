/// Which listener a request arrived on. The router serves each route on some of them: the
/// tenant API on `.main`, `/metrics` and the admin API on `.ops` when an operations listener is
/// configured (else on `.main`), the probes everywhere.
public enum Listener: String, Sendable, Hashable {
    /// The public listener (`listen`, and `listenPlain` beside a TLS one).
    case main
    /// The operations listener (`opsListen`).
    case ops
}

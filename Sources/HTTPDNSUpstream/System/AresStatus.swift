import CAres
import HTTPDNSCore

/// Maps c-ares results to answers and errors (one place for c-ares codes): the outcome of a
/// lookup, and the status of a setup call.
enum AresStatus {
    /// ARES_ENOTFOUND is NXDOMAIN, ARES_ENODATA (or success without an address of the family)
    /// NODATA; both without TTLs. ARES_ETIMEOUT is `.timeout`, SERVFAIL/REFUSED
    /// `.serverFailure`, everything else `.transport`; the c-ares status is `underlying`.
    static func result(status: Int32, addresses: [String]) -> Result<UpstreamAnswer, UpstreamError> {
        switch status {
        case ARES_SUCCESS:
            return .success(UpstreamAnswer(addresses: addresses, ttl: nil))
        case ARES_ENOTFOUND:
            return .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true))
        case ARES_ENODATA:
            return .success(UpstreamAnswer(addresses: [], ttl: nil))
        case ARES_ETIMEOUT:
            return .failure(UpstreamError(.timeout, "system resolver: " + message(status), underlying: Int(status)))
        case ARES_ESERVFAIL, ARES_EREFUSED:
            return .failure(UpstreamError(.serverFailure, "system resolver: " + message(status), underlying: Int(status)))
        default:
            return .failure(UpstreamError(.transport, "system resolver: " + message(status), underlying: Int(status)))
        }
    }

    /// Throws `.transport` naming `call` and the c-ares message unless `status` is ARES_SUCCESS:
    /// for the calls that set the resolver up (`ares_library_init`, `ares_init_options`, ...).
    static func check(_ status: Int32, _ call: String) throws(UpstreamError) {
        guard status != ARES_SUCCESS else { return }
        throw UpstreamError(.transport, call + ": " + message(status), underlying: Int(status))
    }

    static func message(_ status: Int32) -> String {
        String(cString: ares_strerror(status))
    }
}

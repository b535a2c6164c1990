/// What the service's MaxMind-format databases (`geoDatabase`, `asnDatabase`) say of a client's
/// address, for the `countries`, `regions` and `asns` conditions of `rules`. Implemented on
/// libmaxminddb (`HTTPDNSGeo`); called from any thread, only for names some rule names.
public protocol GeoLookup: Sendable {
    func record(for address: IPAddress) -> GeoRecord
}

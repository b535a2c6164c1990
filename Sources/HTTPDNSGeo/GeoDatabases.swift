import HTTPDNSCore
import Synchronization

/// The service's geo and ASN databases (service keys `geoDatabase`, `asnDatabase`): what the
/// `countries`, `regions` and `asns` conditions of `rules` read. Opened at start-up (a bad file
/// is a configuration error naming its key) and opened again by `reload` (SIGHUP), which keeps
/// the files in use when a new one cannot be opened.
public final class GeoDatabases: GeoLookup {
    public let geoPath: String?
    public let asnPath: String?
    private let databases: Mutex<(geo: MaxMindDatabase?, asn: MaxMindDatabase?)>

    /// Opens both files; throws naming the key of the one that cannot be opened.
    public init(geoPath: String?, asnPath: String?) throws(ConfigError) {
        self.geoPath = geoPath
        self.asnPath = asnPath
        let geo = try Self.open(geoPath, key: "geoDatabase")
        let asn = try Self.open(asnPath, key: "asnDatabase")
        databases = Mutex((geo, asn))
    }

    private static func open(_ path: String?, key: String) throws(ConfigError) -> MaxMindDatabase? {
        guard let path else { return nil }
        do throws(GeoDatabaseError) {
            return try MaxMindDatabase(path: path)
        } catch {
            throw ConfigError(key: key, "cannot read the MaxMind database \(error)")
        }
    }

    /// Opens the files again; a file that cannot be opened keeps the one in use and is
    /// reported (by key) in the result.
    public func reload() -> [ConfigError] {
        var failures: [ConfigError] = []
        var geo: MaxMindDatabase?, asn: MaxMindDatabase?
        do throws(ConfigError) { geo = try Self.open(geoPath, key: "geoDatabase") } catch { failures.append(error) }
        do throws(ConfigError) { asn = try Self.open(asnPath, key: "asnDatabase") } catch { failures.append(error) }
        databases.withLock { current in
            if let geo { current.geo = geo }
            if let asn { current.asn = asn }
        }
        return failures
    }

    public func record(for address: IPAddress) -> GeoRecord {
        let (geo, asn) = databases.withLock { ($0.geo, $0.asn) }
        let (country, regions) = geo?.location(address) ?? (nil, [])
        return GeoRecord(country: country, regions: regions, asn: asn?.asn(address))
    }
}

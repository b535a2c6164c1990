import HTTPDNSCore
import HTTPDNSWire

/// Turns a DoH JSON API body (WIRE-FORMATS §1) into an ``UpstreamAnswer``. Pure: no I/O.
///
/// Accepts `Status`, `type` and `TTL` as numbers or strings; keeps only records of the asked
/// type (CNAMEs before them count towards the TTL); reads the negative TTL, and the SOA itself,
/// from an SOA in `Authority`; a bare JSON array (`short=1`) gives addresses without a TTL.
enum DoHJSONParser {
    static func parse(_ body: [UInt8], family: RecordFamily) -> Result<UpstreamAnswer, UpstreamError> {
        guard !body.isEmpty else {
            return .failure(UpstreamError(.malformed, "empty body"))
        }
        guard let value = JSONValue.read(body) else {
            return .failure(UpstreamError(.malformed, "body is not JSON: \(snippet(body))"))
        }
        if let list = value.array {
            return parseShort(list, family: family, body: body)
        }
        guard value.isObject else {
            return .failure(UpstreamError(.malformed, "body is neither a JSON object nor an array: \(snippet(body))"))
        }
        return parseFull(value, family: family, body: body)
    }

    /// `short=1`: a bare array of address strings, no TTL.
    private static func parseShort(_ list: [JSONValue], family: RecordFamily, body: [UInt8]) -> Result<UpstreamAnswer, UpstreamError> {
        var addresses: [String] = []
        for item in list {
            guard let text = item.string else {
                return .failure(UpstreamError(.malformed, "short answer holds a non-string: \(snippet(body))"))
            }
            if let address = IPAddress(text), address.family == family {
                addresses.append(address.description)
            }
        }
        return .success(UpstreamAnswer(addresses: addresses, ttl: nil))
    }

    private static func parseFull(_ object: JSONValue, family: RecordFamily, body: [UInt8]) -> Result<UpstreamAnswer, UpstreamError> {
        let status: Int
        if let value = object["Status"] {
            guard let number = integer(value) else {
                return .failure(UpstreamError(.malformed, "Status is not a number: \(snippet(body))"))
            }
            status = number
        } else if object["Answer"] != nil {
            status = 0
        } else {
            return .failure(UpstreamError(.malformed, "no Status and no Answer: \(snippet(body))"))
        }
        switch status {
        case 0:
            break
        case 3:
            return .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: negativeTTL(object), soa: soa(object)))
        default:
            return .failure(UpstreamError(.serverFailure, "DNS status \(status)", underlying: status))
        }
        var addresses: [String] = []
        var chainTTL: UInt32?
        var chain = CNAMEChain()
        if let answers = object["Answer"] {
            guard let records = answers.array else {
                return .failure(UpstreamError(.malformed, "Answer is not an array: \(snippet(body))"))
            }
            for record in records where record.isObject {
                guard let type = record["type"].flatMap(recordType) else { continue }
                let ttl = record["TTL"].flatMap(integer).map { UInt32(clamping: $0) }
                if type == Int(family.rawValue) {
                    guard let data = record["data"]?.string, let address = IPAddress(data), address.family == family else {
                        continue
                    }
                    addresses.append(address.description)
                } else if type != 5 {
                    continue  // RRSIG, DNAME, ...: not part of the chain to the addresses
                } else if let owner = record["name"]?.string.flatMap(HostName.init),
                    let target = record["data"]?.string.flatMap(HostName.init)
                {
                    chain.add(owner: owner, target: target, ttl: ttl)
                }
                if let ttl { chainTTL = min(chainTTL ?? ttl, ttl) }
            }
        }
        if addresses.isEmpty {
            // The chain starts at the asked name (`Question`), else at the first CNAME's owner.
            let asked = object["Question"]?.array?.first?["name"]?.string
            if let start = asked.flatMap(HostName.init) ?? chain.firstOwner, let end = chain.end(from: start) {
                return .success(UpstreamAnswer(addresses: [], ttl: end.ttl, negativeTTL: negativeTTL(object), cnameTarget: end.target))
            }
            return .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: false, negativeTTL: negativeTTL(object), soa: soa(object)))
        }
        // No TTL on any record: nil, so the engine applies its default rather than expiring at once.
        return .success(UpstreamAnswer(addresses: addresses, ttl: chainTTL))
    }

    /// RFC 2308: min(SOA TTL, SOA MINIMUM) of the first SOA in `Authority`; nil without one.
    static func negativeTTL(_ object: JSONValue) -> UInt32? {
        guard let authority = object["Authority"]?.array else { return nil }
        for record in authority {
            guard record["type"].flatMap(recordType) == 6, let data = record["data"]?.string else { continue }
            guard let last = data.split(whereSeparator: { $0 == " " || $0 == "\t" }).last,
                let minimum = UInt32(last)
            else { continue }
            if let ttl = record["TTL"].flatMap(integer) {
                return min(minimum, UInt32(clamping: ttl))
            }
            return minimum
        }
        return nil
    }

    /// The first SOA in `Authority` whose owner (`name`) and `data` (`mname rname serial refresh
    /// retry expire minimum`) libknot reads (`DNSSOARecord(zone:data:)`); nil without one. An
    /// SOA that does not read leaves the answer as it is, without an SOA to pass on.
    static func soa(_ object: JSONValue) -> NegativeAnswerSOA? {
        guard let authority = object["Authority"]?.array else { return nil }
        for record in authority {
            guard record["type"].flatMap(recordType) == 6, let zone = record["name"]?.string, let data = record["data"]?.string,
                let read = try? DNSSOARecord(zone: zone, data: data)
            else { continue }
            return NegativeAnswerSOA(read)
        }
        return nil
    }

    /// A number, or a string holding one (spaces and tabs around it allowed); nil for a number
    /// with a fraction beyond `Int`'s range (`1e40`: converting it with `Int(_:)` trapped, found
    /// by the `doh-json` fuzz target). A fraction is cut towards zero.
    static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .string(let text):
            let digits = text.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            return Int(String(decoding: digits, as: UTF8.self))
        case .number(let integer, let double):
            if let integer { return integer }
            return double.isFinite ? Int(exactly: double.rounded(.towardZero)) : nil
        default:
            return nil
        }
    }

    /// A record type as a number, numeric string, or mnemonic (`A`, `AAAA`, `CNAME`, `SOA`).
    static func recordType(_ value: JSONValue) -> Int? {
        if let number = integer(value) { return number }
        switch value.string?.uppercased() {
        case "A": return 1
        case "AAAA": return 28
        case "CNAME": return 5
        case "SOA": return 6
        default: return nil
        }
    }

    private static func snippet(_ body: [UInt8]) -> String {
        String(decoding: body.prefix(120), as: UTF8.self)
    }
}

import HTTPDNSCore
import HTTPDNSCrypto

/// The DoH JSON API (`docs/doh-json.md`, WIRE-FORMATS §1) over the same engines, caches and
/// statistics as API v1: `GET /resolve?name=N[&type=T][&short=1][&edns_client_subnet=CIDR]`,
/// the account named by `uid` (`default` when absent): its lookup and its hit reader.
struct DoHJSONHandler: Sendable {
    let clients: ClientRules
    let lookups: Lookups

    /// `GET /resolve`: one name, one family (A or AAAA).
    func resolve(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        guard let nameText = request.query["name"], !nameText.isEmpty else {
            throw APIError(.missingArgument, "the 'name' argument is required")
        }
        guard let host = HostName(nameText) else {
            throw APIError(.invalidHost, "'\(nameText)' is not a valid domain name (RFC 1035; IDN must be punycode)")
        }
        let family = try Self.family(request.query["type"]).get()
        let short = try Self.short(request.query["short"]).get()
        var subnetAddress: IPAddress?
        if let subnet = request.query["edns_client_subnet"], !subnet.isEmpty {
            guard let address = Self.subnetAddress(subnet) else {
                throw APIError(.invalidParameter, "edns_client_subnet must be an address or ADDRESS/PREFIX, got '\(subnet)'")
            }
            subnetAddress = address
        }
        let network =
            engine.lookupOptions.ispEnable
            ? self.network(subnet: subnetAddress, forwardedFor: request.forwardedFor, peer: request.peerAddress) : ""
        let shortForm = short
        let clients = self.clients
        return lookups.lookUp(
            [host], [family], engine: engine, network: network, from: request,
            clientAddress: {
                subnetAddress ?? clients.selectAddress(clientIP: nil, forwardedFor: request.forwardedFor, peer: request.peerAddress)
            }
        ) { results in
            DoHJSONRendering.answer(results[0], family: family, short: shortForm)
        }
    }

    /// The client network of a request to an account with `ispEnable`: the address of its
    /// `edns_client_subnet` (`subnet`), else the peer (or, from a trusted proxy, the address
    /// `X-Forwarded-For` names); `""` when none is known.
    func network(subnet: IPAddress?, forwardedFor: String?, peer: PeerAddress?) -> String {
        let address =
            subnet
            ?? clients.selectAddress(clientIP: nil, forwardedFor: forwardedFor, peer: peer)
        return address.map(ClientNetwork.network(of:)) ?? ""
    }

    /// The `short` argument: `1`/`true`, or `0`/`false`/empty/absent.
    static func short(_ text: String?) -> Result<Bool, APIError> {
        switch text {
        case nil, "0", "false", "": .success(false)
        case "1", "true": .success(true)
        case let text?: .failure(APIError(.invalidParameter, "short must be 1 or 0, got '\(text)'"))
        }
    }

    /// The hit reader (`HitReader`) of `GET /resolve` and `GET /dns-query` with `Accept:
    /// application/dns-json`, written by `DoHJSONRendering.fastAnswer` (the
    /// general path's writer); for `ispEnable`, the hit of the network `network(subnet:forwardedFor:peer:)` picks.
    /// Nil for an invalid argument and `enc`; a signed request (`ak`, `ts` or `key`) runs the
    /// general signature check first. Other arguments are ignored, as on the general path. A
    /// miss is written by `DoHJSONRendering.answer`, as `resolve` writes it.
    func hit<Head: RequestHead>(_ head: Head, _ request: HitRequest, _ service: HTTPDNSService) -> FastResult? {
        typealias Name = HitReader.DoHJSON
        let arguments = request.arguments, options = request.options
        guard arguments[Name.enc] == nil, let nameText = arguments[Name.name], nameText.count > 0,
            case .success(let family) = Self.family(arguments[Name.type].map(HTTPDNSService.string)),
            case .success(let short) = Self.short(arguments[Name.short].map(HTTPDNSService.string))
        else { return nil }
        // The subnet only chooses the network of `ispEnable` accounts, but an invalid one is refused.
        var subnetAddress: IPAddress?
        if let subnet = arguments[Name.subnet], subnet.count > 0 {
            guard let address = Self.subnetAddress(HTTPDNSService.string(subnet)) else { return nil }
            subnetAddress = address
        }
        let network =
            options.ispEnable
            ? self.network(subnet: subnetAddress, forwardedFor: clients.forwardedFor(head), peer: head.peerAddress) : ""
        let signed = arguments[Name.ak] != nil || arguments[Name.ts] != nil || arguments[Name.key] != nil
        let needsAdmit = signed || options.hasClientKeys || options.hasAESKey
        return service.answerHit(
            head, request, host: nameText, family: family, network: network, needsAdmit: needsAdmit,
            typeAsked: { (arguments[Name.type].map(HTTPDNSService.string) ?? "A").uppercased() },
            render: { { DoHJSONRendering.answer($0[0], family: family, short: short) } }
        ) { host, answer in
            DoHJSONRendering.fastAnswer(host: host, family: family, answer: answer, short: short)
        }
    }

    /// Whether an `Accept` header lists `application/dns-json` (any case, any parameters, spaces
    /// and tabs anywhere in the media type ignored): a `GET /dns-query` that says so is for the
    /// DoH JSON API, as Cloudflare's endpoint has it, rather than RFC 8484.
    static func acceptsDNSJSON(_ accept: UnsafeRawBufferPointer) -> Bool {
        let wanted: StaticString = "application/dns-json"
        var matched = 0  // bytes of `wanted` matched so far in this element, -1 once it differs
        var inParameters = false
        for byte in accept {
            switch byte {
            case UInt8(ascii: ","):
                if matched == wanted.utf8CodeUnitCount { return true }
                (matched, inParameters) = (0, false)
            case UInt8(ascii: ";"): inParameters = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"): continue
            default:
                guard !inParameters, matched >= 0 else { continue }
                let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                matched = matched < wanted.utf8CodeUnitCount && wanted.utf8Start[matched] == lower ? matched + 1 : -1
            }
        }
        return matched == wanted.utf8CodeUnitCount
    }

    /// The family of a `type` argument: absent or empty is A; `A`/`1`, `AAAA`/`28` (any case).
    /// Other record types are valid DNS but not served by this API (`UnsupportedType`, DNS
    /// status 4 NOTIMP); anything else is `InvalidParameter`.
    static func family(_ text: String?) -> Result<RecordFamily, APIError> {
        guard let text, !text.isEmpty else { return .success(.a) }
        switch text.uppercased() {
        case "A", "1": return .success(.a)
        case "AAAA", "28": return .success(.aaaa)
        default: break
        }
        let isNumber = text.utf8.count <= 5 && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && (Int(text) ?? 0) <= 65_535
        let isMnemonic =
            text.utf8.count <= 10 && (text.utf8.first.map { UInt8(ascii: "A")...UInt8(ascii: "z") ~= $0 } ?? false)
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }
        guard isNumber || isMnemonic else {
            return .failure(APIError(.invalidParameter, "type must be a record type number or mnemonic, got '\(text)'"))
        }
        return .failure(APIError(.unsupportedType, "type \(text) is not served by this API: only A (1) and AAAA (28)"))
    }

    /// The address of an `edns_client_subnet` argument: `ADDRESS` or `ADDRESS/PREFIX` (host bits
    /// may be set, as clients send them). The account's per-network cache keys on the address's
    /// /24 or /56, like every other path, whatever the prefix.
    static func subnetAddress(_ text: String) -> IPAddress? {
        // Found in the UTF-8 view, not split into an array: this runs on every hit that names a subnet.
        guard let slash = text.utf8.firstIndex(of: UInt8(ascii: "/")) else { return IPAddress(text) }
        guard let address = IPAddress(String(text[..<slash])) else { return nil }
        let digits = text.utf8[text.utf8.index(after: slash)...]
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            digits.reduce(0, { $0 * 10 + Int($1 - 0x30) }) <= address.count * 8
        else { return nil }
        return address
    }
}

extension APIError.Code {
    /// DoH JSON API: a record type other than A and AAAA (DNS status 4, NOTIMP).
    static let unsupportedType = Self("UnsupportedType", status: 400)
}

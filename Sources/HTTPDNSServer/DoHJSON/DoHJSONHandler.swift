import HTTPDNSCore
import HTTPDNSCrypto

/// The DoH JSON API (`docs/doh-json.md`, WIRE-FORMATS §1) over the same engines, caches and
/// statistics as API v1: `GET /resolve?name=N[&type=T][&short=1][&edns_client_subnet=CIDR]`,
/// the account named by `uid` (`default` when absent).
extension HTTPDNSService {
    /// `GET /resolve`: one name, one family (A or AAAA).
    func dohJSONResolve(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        guard let nameText = request.query["name"], !nameText.isEmpty else {
            throw APIError(.missingArgument, "the 'name' argument is required")
        }
        guard let host = HostName(nameText) else {
            throw APIError(.invalidHost, "'\(nameText)' is not a valid domain name (RFC 1035; IDN must be punycode)")
        }
        let family = try Self.dohJSONFamily(request.query["type"]).get()
        let short = try Self.dohJSONShort(request.query["short"]).get()
        var subnetAddress: IPAddress?
        if let subnet = request.query["edns_client_subnet"], !subnet.isEmpty {
            guard let address = Self.subnetAddress(subnet) else {
                throw APIError(.invalidParameter, "edns_client_subnet must be an address or ADDRESS/PREFIX, got '\(subnet)'")
            }
            subnetAddress = address
        }
        let network =
            engine.lookupOptions.ispEnable
            ? dohJSONNetwork(subnet: subnetAddress, forwardedFor: request.forwardedFor, peer: request.peerAddress) : ""
        let shortForm = short
        return lookUp([host], [family], engine: engine, network: network, from: request) { results in
            DoHJSONRendering.answer(results[0], family: family, short: shortForm)
        }
    }

    /// The client network of a request to an account with `ispEnable`: the address of its
    /// `edns_client_subnet` (`subnet`), else the peer (or, from a trusted proxy, the address
    /// `X-Forwarded-For` names); `""` when none is known.
    func dohJSONNetwork(subnet: IPAddress?, forwardedFor: String?, peer: PeerAddress?) -> String {
        let address =
            subnet
            ?? ClientNetwork.selectAddress(
                clientIP: nil, forwardedFor: forwardedFor, peer: peer?.ipAddress, trustedProxies: limits.trustedProxies)
        return address.map(ClientNetwork.network(of:)) ?? ""
    }

    /// The `short` argument: `1`/`true`, or `0`/`false`/empty/absent.
    static func dohJSONShort(_ text: String?) -> Result<Bool, APIError> {
        switch text {
        case nil, "0", "false", "": .success(false)
        case "1", "true": .success(true)
        case let text?: .failure(APIError(.invalidParameter, "short must be 1 or 0, got '\(text)'"))
        }
    }

    /// The hit reader (`HitReader`) of `GET /resolve` and `GET /dns-query` with `Accept:
    /// application/dns-json`, written by `DoHJSONRendering.fastAnswer` (the
    /// general path's writer); for `ispEnable`, the hit of the network `dohJSONNetwork` picks.
    /// Nil for an invalid argument and `enc`; a signed request (`ak`, `ts` or `key`) runs the
    /// general signature check first. Other arguments are ignored, as on the general path.
    func dohJSONHit<Head: RequestHead>(_ head: Head, _ request: HitRequest) -> FastResponse? {
        typealias Name = HitReader.DoHJSON
        let arguments = request.arguments, options = request.options
        guard arguments[Name.enc] == nil, let nameText = arguments[Name.name], nameText.count > 0,
            case .success(let family) = Self.dohJSONFamily(arguments[Name.type].map(Self.string)),
            case .success(let short) = Self.dohJSONShort(arguments[Name.short].map(Self.string))
        else { return nil }
        // The subnet only chooses the network of `ispEnable` accounts, but an invalid one is refused.
        var subnetAddress: IPAddress?
        if let subnet = arguments[Name.subnet], subnet.count > 0 {
            guard let address = Self.subnetAddress(Self.string(subnet)) else { return nil }
            subnetAddress = address
        }
        let network =
            options.ispEnable
            ? dohJSONNetwork(subnet: subnetAddress, forwardedFor: hitForwardedFor(head), peer: head.peerAddress) : ""
        let signed = arguments[Name.ak] != nil || arguments[Name.ts] != nil || arguments[Name.key] != nil
        let needsAdmit = signed || options.hasClientKeys || options.hasAESKey
        return answerHit(head, request, host: nameText, family: family, network: network, needsAdmit: needsAdmit) { host, answer in
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
    static func dohJSONFamily(_ text: String?) -> Result<RecordFamily, APIError> {
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

    /// The authentication step of the DoH JSON API. A request carrying any of `ak`, `ts`, `key`
    /// is signed and must carry all of them and `uid`: `ak` names a client key of the account
    /// whose role allows resolve, `ts` (when it was signed, Unix seconds) is within
    /// `maxSignatureAge` of the server's time in either direction, and `key` is
    /// `DoHJSONSignature.key` over `uid`, the key's secret, `ts`, `name` and `ak` as sent. An
    /// unsigned request passes unless the account has `requireSignedRequests`.
    /// The general path's `HTTPRequest` and the fast path's borrowed head both come here
    /// (`SignedRequest`); the arguments the signature covers are read as the bytes sent.
    func authenticateDoHJSON(_ request: some SignedRequest, config: AccountConfig) -> Result<Authentication, APIError> {
        request.withSignedParts { authenticateDoHJSON($0, config: config) }
    }

    /// The same on the request's parts (`authenticateTenant` calls it so, with the account's
    /// configuration read in place inside the parts' closure).
    func authenticateDoHJSON(_ parts: SignedParts, config: AccountConfig) -> Result<Authentication, APIError> {
        guard parts.argument("ak") != nil || parts.argument("ts") != nil || parts.argument("key") != nil else {
            guard !config.requireSignedRequests else {
                return .failure(
                    APIError(.invalidSignature, "missing signature: this account requires signed requests (uid, ak, ts and key arguments)"))
            }
            return .success(.anonymous)
        }
        // As text from here: `DoHJSONSignature.key` (shared with the upstream client) takes its
        // parts so, and a key id compares with `ak` as text does.
        guard let uid = parts.argument("uid").map(Self.string), let keyID = parts.argument("ak").map(Self.string),
            let timestamp = parts.argument("ts").map(Self.string), let presented = parts.argument("key").map(Self.string)
        else {
            return .failure(APIError(.invalidSignature, "malformed signature: a signed request needs all of uid, ak, ts and key"))
        }
        guard !config.clientKeys.isEmpty || config.requireSignedRequests else {
            return .failure(
                APIError(.invalidSignature, "this account has no clientKeys to check a signature with: send the request unsigned"))
        }
        guard (1...12).contains(timestamp.utf8.count), timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Double(timestamp)
        else {
            return .failure(APIError(.invalidSignature, "ts must be the signing time in Unix seconds (digits only)"))
        }
        // The key, its role and `maxSignatureAge` are the account's: they are looked at after the
        // digest, which an unknown `ak` (or a missing account) computes with a decoy secret.
        let key = config.clientKeys.first { $0.id == keyID }
        let matches: Bool
        do {
            let expected = try DoHJSONSignature.key(
                uid: uid, secret: key?.secret ?? ClientAuthenticator.decoySecret, timestamp: timestamp,
                name: parts.argument("name").map(Self.string) ?? "",
                accessKeyID: keyID)
            matches = Digest.constantTimeEquals(Array(expected.utf8), Array(presented.lowercased().utf8))
        } catch {
            Log.error("DoH JSON signature check: \(error)")
            return .failure(APIError(.internalError, "the signature could not be checked"))
        }
        guard let key, matches else {
            return .failure(
                APIError(
                    .invalidSignature,
                    "bad signature: key is not sha256(uid + secret + ts + name + ak) for a client key of this account named by ak"))
        }
        guard key.role.allows(.resolve) else {
            return .failure(APIError(.forbidden, "key '\(key.id)' has role \(key.role.rawValue); this endpoint needs resolve"))
        }
        return checkDoHJSONTime(timestamp, seconds, config: config).map { .failure($0) } ?? .success(.key(id: key.id, role: key.role))
    }

    /// `ts` within `maxSignatureAge` of the server's time in either direction, else the refusal.
    private func checkDoHJSONTime(_ timestamp: String, _ seconds: Double, config: AccountConfig) -> APIError? {
        let now = authenticator.clock.now()
        guard now - seconds <= config.maxSignatureAge else {
            return APIError(
                .signatureExpired,
                "signature expired: ts=\(timestamp) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) before the server's time \(Int(now))"
            )
        }
        guard seconds - now <= config.maxSignatureAge else {
            return APIError(
                .invalidSignature,
                "ts too far ahead: ts=\(timestamp) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) after the server's time \(Int(now))"
            )
        }
        return nil
    }
}

extension APIError.Code {
    /// DoH JSON API: a record type other than A and AAAA (DNS status 4, NOTIMP).
    static let unsupportedType = Self("UnsupportedType", status: 400)
}

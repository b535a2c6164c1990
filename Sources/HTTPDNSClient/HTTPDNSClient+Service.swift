import Foundation

extension HTTPDNSClient {
    /// Asks the services in turn, from the one that answered last, until one answers `hosts`
    /// (at most 20). A refusal (4xx) ends the search: another service would refuse it too.
    /// Throws `.unavailable` with each service's failure when none answered, or
    /// `.unverifiedReply` when one of them gave an answer that the encryption key did not verify
    /// (so that the caller does not fall back to the system resolver's plain DNS).
    func fetchFromServices(_ hosts: [String]) async throws(HTTPDNSClientError) -> [(String, Result<HTTPDNSAnswer, HTTPDNSClientError>)] {
        let services = configuration.services
        guard !services.isEmpty else { throw .invalidConfiguration("no service URL") }
        var failures: [String] = []
        var unverified = false
        for step in 0..<services.count {
            let index = (preferredService + step) % services.count
            do {
                let entries = try await ask(services[index], hosts)
                preferredService = index
                return zip(hosts, entries).map { host, entry in (host, outcome(of: entry, asked: host)) }
            } catch .unavailable(let reasons, _) {
                failures += reasons.map { "\(services[index].absoluteString): \($0)" }
            } catch .badReply(let reason) {
                failures.append("\(services[index].absoluteString): \(reason)")
            } catch .unverifiedReply(let reasons) {
                failures += reasons.map { "\(services[index].absoluteString): \($0)" }
                unverified = true
            }
        }
        throw unverified ? .unverifiedReply(failures: failures) : .unavailable(failures: failures, system: nil)
    }

    /// One service's entries for `hosts`, in order. A signature refused as expired or too far
    /// ahead is made again once, with the clock offset the refusal's `Date` header taught.
    private func ask(_ service: URL, _ hosts: [String]) async throws(HTTPDNSClientError) -> [ResolveEntry] {
        var response = try await send(service, hosts)
        if response.status == 401, configuration.credentials != nil,
            let body = try? JSONDecoder().decode(ServiceErrorBody.self, from: response.body),
            body.error.message?.hasPrefix("signature expir") == true
        {
            response = try await send(service, hosts)
        }
        switch response.status {
        case 200:
            return try entries(response.body, count: hosts.count)
        case 500...599:
            throw .unavailable(failures: ["HTTP \(response.status)\(errorSuffix(response.body))"], system: nil)
        default:
            let body = try? JSONDecoder().decode(ServiceErrorBody.self, from: response.body)
            throw .refused(status: response.status, code: body?.error.code ?? "", message: body?.error.message ?? "")
        }
    }

    /// Sends one resolve of `hosts` to `service`, encrypted when the configuration has an
    /// encryption key and signed when it has credentials (the signature covers `enc` as sent),
    /// learns the service's clock from the reply, and returns the reply with its body opened.
    private func send(_ service: URL, _ hosts: [String]) async throws(HTTPDNSClientError) -> HTTPDNSTransportResponse {
        let base = service.absoluteString.hasSuffix("/") ? String(service.absoluteString.dropLast()) : service.absoluteString
        let path =
            (service.path.hasSuffix("/") ? String(service.path.dropLast()) : service.path)
            + "/v1/\(configuration.account)/resolve"
        var query = SignatureV1.canonicalQuery([("host", hosts.joined(separator: ",")), ("type", configuration.family.rawValue)])
        var sealed: SealedRequest?
        if let key = configuration.encryptionKey {
            let request = try SealedRequest(query: query, key: key, method: "GET", path: path)
            query = SignatureV1.canonicalQuery([("enc", request.enc)])
            sealed = request
        }
        let canonical = query
        if let credentials = configuration.credentials {
            let expiry = Int((clock.now().timeIntervalSince1970 + clockOffset + configuration.signatureLifetime).rounded(.down))
            let string = SignatureV1.canonicalString(method: "GET", path: path, query: canonical, expiry: expiry)
            guard let sign = try? SignatureV1.sign(string, secret: credentials.secret) else {
                throw .invalidConfiguration("HMAC-SHA256 failed")
            }
            query += "&kid=\(SignatureV1.encode(credentials.keyID))&t=\(expiry)&sign=\(sign)"
        }
        guard let url = URL(string: base + "/v1/\(SignatureV1.encode(configuration.account))/resolve?" + query) else {
            throw .invalidConfiguration("cannot make a URL from \(service.absoluteString)")
        }
        let response: HTTPDNSTransportResponse
        do {
            response = try await transport.get(url, headers: ["Accept": "application/json"], timeout: configuration.requestTimeout)
        } catch {
            throw .unavailable(failures: ["\(error)"], system: nil)
        }
        if let date = response.headers["date"].flatMap(Self.parseHTTPDate) {
            clockOffset = date.timeIntervalSince(clock.now())
        }
        return try sealed?.open(response) ?? response
    }

    /// The entries of a 200 reply: the single-host object, or `results` of a batch.
    private func entries(_ body: Data, count: Int) throws(HTTPDNSClientError) -> [ResolveEntry] {
        let decoder = JSONDecoder()
        if count == 1, let entry = try? decoder.decode(ResolveEntry.self, from: body) { return [entry] }
        if let batch = try? decoder.decode(ResolveBatch.self, from: body), batch.results.count == count {
            return batch.results
        }
        throw .badReply("expected \(count) answers: \(String(decoding: body.prefix(200), as: UTF8.self))")
    }

    /// `entry` as an answer (kept for its TTL), or the failure it carries.
    private func outcome(of entry: ResolveEntry, asked host: String) -> Result<HTTPDNSAnswer, HTTPDNSClientError> {
        if let error = entry.error {
            // Refused for this name alone, as a one-name request would be (403): no other
            // service would answer it either.
            if error.code == Self.domainNotAllowed {
                return .failure(.refused(status: 403, code: error.code, message: error.message ?? ""))
            }
            return .failure(.unavailable(failures: ["\(error.code): \(error.message ?? "")"], system: nil))
        }
        let answer = HTTPDNSAnswer(
            host: host, ipv4: entry.ips ?? [], ipv6: entry.ipsv6 ?? [], ttl: max(entry.ttl ?? 0, 0), source: .service,
            nxdomain: entry.nxdomain ?? false)
        remember(answer)
        return .success(answer)
    }

    private func errorSuffix(_ body: Data) -> String {
        guard let body = try? JSONDecoder().decode(ServiceErrorBody.self, from: body) else { return "" }
        return " \(body.error.code)"
    }

    /// An HTTP `Date` (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}

import Foundation
import HTTPDNSCore
import HTTPDNSCrypto

extension HTTPDNSService {
    /// Nil for a request with admin authority (`adminCheck`); a refused change (PUT, DELETE)
    /// leaves an audit line.
    func adminRefusal(_ request: HTTPRequest) -> APIError? {
        guard let refusal = adminCheck(request) else { return nil }
        if request.method == "PUT" || request.method == "DELETE" {
            AdminHandler.audit(request, result: "refused \(refusal.code.status)", detail: "")
        }
        return refusal
    }

    /// The one check of admin authority: nil for the admin bearer token, or for a live console
    /// session (its cookie) together with that session's CSRF token (`X-CSRF-Token`), whatever
    /// the method: the cookie alone, which a browser sends by itself, never is. Without a
    /// configured token the admin API is off (403); a missing or wrong token or an unknown or
    /// expired session is 401; a live session without its CSRF token is 403.
    func adminCheck(_ request: HTTPRequest) -> APIError? {
        guard adminToken != nil else {
            return APIError(.forbidden, "the admin API is disabled: set HTTPDNS_ADMIN_TOKEN or adminToken")
        }
        switch checkAdminToken(request.authorization) {
        case .success(true): return nil
        case .success(false): break
        case .failure(let error):
            Log.error("admin API: could not check the token: \(error)")
            return APIError(.internalError, "could not check the token")
        }
        if request.authorization == nil, let session = request.consoleSession {
            switch handlers.console.sessions.check(session, csrf: request.csrfToken) {
            case .valid: return nil
            case .badCSRF: return APIError(.forbidden, "missing or wrong \(ConsoleSessions.csrfHeader) header")
            case .unknown: return APIError(.unauthorized, "the console session has expired or is unknown: sign in again")
            }
        }
        return APIError(.unauthorized, "missing or wrong bearer token", headers: [("WWW-Authenticate", "Bearer")])
    }

    /// Whether the request carries an admin credential at all (a bearer token or a console
    /// session), whether or not it is valid.
    static func offersAdminCredential(_ request: HTTPRequest) -> Bool {
        if let authorization = request.authorization {
            return authorization.utf8.count > 7 && authorization.prefix(7).lowercased() == "bearer "
        }
        return request.consoleSession != nil
    }

    /// True when `header` is `Bearer <the admin token>`. The scheme name is case-insensitive
    /// (RFC 7235).
    func checkAdminToken(_ header: String?) -> Result<Bool, CryptoError> {
        guard let header, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
            return .success(false)
        }
        return Self.tokenMatches(header.utf8.dropFirst(7), adminToken)
    }

    /// Whether `presented` is `adminToken` (false when there is none). The SHA-256 digests of the
    /// two are compared in constant time, so neither the content nor the length of the token
    /// shows in the time taken.
    static func tokenMatches(_ presented: some Collection<UInt8>, _ adminToken: String?) -> Result<Bool, CryptoError> {
        guard let adminToken else { return .success(false) }
        do throws(CryptoError) {
            let digest = try Digest.sha256(presented)
            let expected = try Digest.sha256(adminToken.utf8)
            return .success(Digest.constantTimeEquals(digest, expected))
        } catch {
            return .failure(error)
        }
    }

    /// `tokenMatches` for the console's sign-in: nil without an admin token; a token that cannot
    /// be checked (a digest error, logged) does not match.
    static func tokenMatcher(_ adminToken: String?) -> (@Sendable (String) -> Bool)? {
        guard let adminToken else { return nil }
        return { presented in
            switch tokenMatches(presented.utf8, adminToken) {
            case .success(let matches): return matches
            case .failure(let error):
                Log.error("console: could not check the token: \(error)")
                return false
            }
        }
    }
}

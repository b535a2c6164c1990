import Foundation
import HTTPDNSCore
import HTTPDNSCrypto

extension HTTPDNSService {
    /// Nil for a request with the admin bearer token. Without a configured token the admin API is
    /// off (403); a missing or wrong token is 401. A refused change (PUT, DELETE) leaves an audit
    /// line.
    func adminRefusal(_ request: HTTPRequest) -> APIError? {
        let refusal: APIError
        if adminToken == nil {
            refusal = APIError(.forbidden, "the admin API is disabled: set HTTPDNS_ADMIN_TOKEN or adminToken")
        } else {
            switch checkAdminToken(request.authorization) {
            case .success(true): return nil
            case .success(false):
                refusal = APIError(.unauthorized, "missing or wrong bearer token", headers: [("WWW-Authenticate", "Bearer")])
            case .failure(let error):
                Log.error("admin API: could not check the token: \(error)")
                refusal = APIError(.internalError, "could not check the token")
            }
        }
        if request.method == "PUT" || request.method == "DELETE" {
            AdminHandler.audit(request, result: "refused \(refusal.code.status)", detail: "")
        }
        return refusal
    }

    /// True when `header` is `Bearer <the admin token>`. The scheme name is case-insensitive
    /// (RFC 7235). The SHA-256 digests of the two tokens are compared in constant time, so
    /// neither the content nor the length of the token shows in the time taken.
    func checkAdminToken(_ header: String?) -> Result<Bool, CryptoError> {
        guard let adminToken, let header, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else {
            return .success(false)
        }
        do throws(CryptoError) {
            let presented = try Digest.sha256(header.utf8.dropFirst(7))
            let expected = try Digest.sha256(adminToken.utf8)
            return .success(Digest.constantTimeEquals(presented, expected))
        } catch {
            return .failure(error)
        }
    }
}

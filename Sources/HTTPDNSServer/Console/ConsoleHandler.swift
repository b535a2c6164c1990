import Foundation
import HTTPDNSCore

/// The web console (`docs/console.md`): its page and assets, compiled in (`ConsoleAssets`), and
/// sign-in with the admin token, which opens a session (`ConsoleSessions`). Everything else the
/// console shows it asks of the admin and tenant APIs, where a session with its CSRF token counts
/// as the admin token (`HTTPDNSService.adminCheck`).
struct ConsoleHandler: Sendable {
    let sessions: ConsoleSessions
    /// Whether `token` is the admin token (`HTTPDNSService.tokenMatches`); nil when there is none.
    let adminTokenMatches: (@Sendable (String) -> Bool)?

    /// Sent with every console response: only the console's own files run and are styled (no
    /// inline script or style), it talks to its own origin only, and no other site may frame it.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    /// `GET /console/` (and `/console`): the page.
    func page() -> HTTPResponse { asset(ConsoleAssets.indexHTML, "text/html; charset=utf-8") }

    /// `GET /console/console.js` and the other scripts (`ConsoleAssets`, one constant a file).
    func script(_ bytes: [UInt8]) -> HTTPResponse { asset(bytes, "text/javascript; charset=utf-8") }

    /// `GET /console/console.css`.
    func style() -> HTTPResponse { asset(ConsoleAssets.consoleCSS, "text/css; charset=utf-8") }

    private func asset(_ bytes: [UInt8], _ type: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: type, headers: Self.securityHeaders, body: bytes)
    }

    /// `POST /console/login` with `{"token":"<admin token>"}`: a new session in an `HttpOnly`,
    /// `SameSite=Strict` cookie (`Secure` on an HTTPS listener) and its CSRF token in the body,
    /// which the console sends back in `X-CSRF-Token` with every API request. The token is never
    /// logged; each attempt leaves an audit line.
    func login(_ request: HTTPRequest) -> HTTPResponse {
        guard let adminTokenMatches else {
            AdminHandler.audit(request, result: "console sign-in refused 403", detail: "")
            return refusal(APIError(.forbidden, "the admin API is disabled: set HTTPDNS_ADMIN_TOKEN or adminToken"))
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let token = object["token"] as? String
        else {
            return refusal(APIError(.invalidBody, #"expected a JSON object {"token":"..."}"#))
        }
        guard adminTokenMatches(token) else {
            AdminHandler.audit(request, result: "console sign-in refused 401", detail: "")
            return refusal(APIError(.unauthorized, "wrong admin token"))
        }
        let session = sessions.create()
        AdminHandler.audit(request, result: "console sign-in ok", detail: "")
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("csrfToken"); writer.string(session.csrfToken); writer.comma()
        writer.key("idleSeconds"); writer.number(Int(ConsoleSessions.idleLifetime))
        writer.raw("}")
        var response = HTTPResponse.json(200, writer)
        response.headers = Self.securityHeaders + [("Set-Cookie", cookie(session.id, request))]
        return response
    }

    /// `GET /console/session`: whether the caller's cookie names a live session and, if so, its
    /// CSRF token (a reloaded page has lost it). Another site cannot read the answer (no CORS),
    /// so the token stays the console's.
    func session(_ request: HTTPRequest) -> HTTPResponse {
        var writer = JSONWriter()
        guard let id = request.consoleSession, let csrf = sessions.csrfToken(of: id) else {
            writer.raw(#"{"signedIn":false}"#)
            var response = HTTPResponse.json(200, writer)
            response.headers = Self.securityHeaders
            return response
        }
        writer.raw(#"{"signedIn":true,"#)
        writer.key("csrfToken"); writer.string(csrf); writer.comma()
        writer.key("idleSeconds"); writer.number(Int(ConsoleSessions.idleLifetime))
        writer.raw("}")
        var response = HTTPResponse.json(200, writer)
        response.headers = Self.securityHeaders
        return response
    }

    /// `POST /console/logout` (admin access: the session with its CSRF token): ends the session
    /// and clears the cookie.
    func logout(_ request: HTTPRequest) -> HTTPResponse {
        if let id = request.consoleSession { sessions.end(id) }
        var response = HTTPResponse(status: 200, body: Array(#"{"signedOut":true}"#.utf8))
        response.headers = Self.securityHeaders + [("Set-Cookie", cookie("", request, clear: true))]
        return response
    }

    private func cookie(_ value: String, _ request: HTTPRequest, clear: Bool = false) -> String {
        var cookie = "\(ConsoleSessions.cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict"
        if request.isTLS { cookie += "; Secure" }
        if clear { cookie += "; Max-Age=0" }
        return cookie
    }

    private func refusal(_ error: APIError) -> HTTPResponse {
        var response = error.response
        response.headers += Self.securityHeaders
        return response
    }
}

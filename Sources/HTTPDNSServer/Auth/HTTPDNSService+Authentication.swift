import HTTPDNSCore

extension HTTPDNSService {
    /// The authentication step of a tenant route whose requests need `role`, for its `access`:
    /// the EMAS signature (`authenticateEMAS`), the DoH JSON signature (`authenticateDoHJSON`),
    /// else signature v1 and the role (`authenticateClient`). One implementation for both paths:
    /// `admit` runs it on the general path's `HTTPRequest`, `fastPathAdmits` on the fast path's
    /// borrowed head; the account's configuration is read in place (`withConfig`), not copied.
    func authenticateTenant(
        _ request: some SignedRequest, access: Route.Access, role: ClientKey.Role, engine: ResolverEngine
    ) -> Result<Authentication, APIError> {
        switch access {
        case .emasSigned: engine.withConfig { authenticateEMAS(request, config: $0) }
        case .dohJSON: engine.withConfig { authenticateDoHJSON(request, config: $0) }
        default: authenticateClient(request, role: role, engine: engine)
        }
    }
}

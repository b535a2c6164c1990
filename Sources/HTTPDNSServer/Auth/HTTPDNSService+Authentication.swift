import HTTPDNSCore

extension HTTPDNSService {
    /// The authentication step of a tenant route whose requests need `role`, for its `access`:
    /// the EMAS signature (`authenticateEMAS`), the DoH JSON signature (`authenticateDoHJSON`),
    /// else signature v1 and the role (`authenticateClient`). One implementation for both paths:
    /// `admit` runs it on the general path's `HTTPRequest`, `fastPathAdmits` on the fast path's
    /// borrowed head. The account's configuration is read in place (`withConfig`) inside the
    /// closure that has the request's parts: a closure that captured the configuration itself
    /// copied it at each level (callgrind: four to six copies a request, 2 000 to 5 000
    /// instructions).
    func authenticateTenant(
        _ request: some SignedRequest, access: Route.Access, role: ClientKey.Role, engine: ResolverEngine
    ) -> Result<Authentication, APIError> {
        switch access {
        case .emasSigned: request.withSignedParts { parts in engine.withConfig { authenticateEMAS(parts, config: $0) } }
        case .dohJSON: request.withSignedParts { parts in engine.withConfig { authenticateDoHJSON(parts, config: $0) } }
        default: authenticateClient(request, role: role, engine: engine)
        }
    }
}

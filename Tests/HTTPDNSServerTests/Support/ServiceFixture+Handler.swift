import HTTPDNSCore

@testable import HTTPDNSServer

extension ServiceFixture {
    /// What the route's handler alone answers `request` (a `GET` of an account's route, answered
    /// at once): no step of the pipeline before it and not its hit step, so a cached name is
    /// answered by the handler's own path (`lookUp` and its format's writer for answers that
    /// come from the upstreams). Nil when no row serves it or the handler deferred.
    func handlerResponse(_ request: HTTPRequest) -> ServerResponse? {
        withRoute(request) { row, match in
            guard case .response(let response) = row.run(service.handlers, match) else { return nil }
            return response
        }
    }

    /// What the pipeline's hit step (`HTTPDNSService.cachedHit`) answers `request` with, as if
    /// every step before it had let the request through; nil when it leaves it to the handler.
    func hitStepResponse(_ request: HTTPRequest) -> ServerResponse? {
        withRoute(request) { row, match in service.cachedHit(row, match) }
    }

    /// The row that serves `request` and its match (with the account's engine), given to `body`.
    private func withRoute(_ request: HTTPRequest, _ body: (Route, Route.Match) -> ServerResponse?) -> ServerResponse? {
        var path = request.path
        return path.withUTF8 { bytes -> ServerResponse? in
            guard let found = service.routeMatcher.match(UnsafeRawBufferPointer(bytes)), let base = found.rows.baseAddress,
                let row = found.rows.indices.map({ base + $0 }).first(where: {
                    $0.pointee.method == request.method && Route.accepts($0, request)
                }),
                let account = Route.account(of: row, found.segments, request)
            else { return nil }
            var match = Route.Match(request: request)
            match.engine = registry.engine(account)
            return body(row.pointee, match)
        }
    }
}

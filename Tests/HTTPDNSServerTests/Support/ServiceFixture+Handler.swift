import HTTPDNSCore

@testable import HTTPDNSServer

extension ServiceFixture {
    /// What the route's handler alone answers `request` (a `GET` of an account's route, answered
    /// at once): no step of the pipeline before it and not its hit step, so a cached name is
    /// answered by the handler's own path (`lookUp` and its format's writer for answers that
    /// come from the upstreams). Nil when no row serves it or the handler deferred.
    func handlerResponse(_ request: HTTPRequest) -> ServerResponse? {
        var path = request.path
        return path.withUTF8 { bytes -> ServerResponse? in
            guard let found = service.routeMatcher.match(UnsafeRawBufferPointer(bytes)),
                let row = found.rows.first(where: { $0.method == request.method && $0.accepts(request) }),
                let account = row.account(found.segments, request)
            else { return nil }
            var match = Route.Match(request: request)
            match.engine = registry.engine(account)
            guard case .response(let response) = row.run(service.handlers, match) else { return nil }
            return response
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPRequest {
    /// Calls `body` with this request seen as a borrowed request head, whose bytes are valid
    /// during the call only: how the general pipeline runs a route's hit reader (`Route.hit`),
    /// the code that answers a cached hit on the fast path, on a request it copied (an opened
    /// encrypted request, a request the fast path left to it).
    func withHead<Result>(_ body: (CopiedHead) -> Result) -> Result {
        let peer = peerAddress, forwarded = forwardedFor
        var accept = accept
        return withSignedParts { parts in
            guard accept != nil else { return body(CopiedHead(parts: parts, peerAddress: peer, forwardedFor: forwarded, accept: nil)) }
            return accept!.withUTF8 {
                body(CopiedHead(parts: parts, peerAddress: peer, forwardedFor: forwarded, accept: UnsafeRawBufferPointer($0)))
            }
        }
    }
}

/// An `HTTPRequest`'s parts as a `RequestHead` (`HTTPRequest.withHead`): its arguments are read
/// as `ConnectionHead` reads libmicrohttpd's, from the request's own list (the first value of each
/// name, as `QueryArguments` keeps them).
struct CopiedHead: RequestHead {
    let parts: SignedParts
    let peerAddress: PeerAddress?
    let forwardedFor: String?
    /// The `Accept` header: the one header a route's row depends on (`Route.Condition`).
    let accept: UnsafeRawBufferPointer?
    /// Not read: the general path logs a lookup from its `HTTPRequest` (`logLookup`).
    var requestID: String? { nil }

    var method: UnsafeRawBufferPointer { parts.method }
    var path: UnsafeRawBufferPointer { parts.path }

    func arguments(_ names: ArgumentNames) -> RequestArguments? {
        var search = ArgumentSearch(names: names)
        for pair in parts.arguments { search.offer(pair.name, value: pair.value) }
        return search.refused ? nil : search.found
    }

    /// `Accept`, nil for any other header: the copy keeps only the headers the pipeline reads,
    /// and a hit reader reads no other.
    func header(_ name: StaticString) -> UnsafeRawBufferPointer? {
        let accept: StaticString = "accept"
        return name.utf8CodeUnitCount == accept.utf8CodeUnitCount
            && strncasecmp(
                UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self),
                UnsafeRawPointer(accept.utf8Start).assumingMemoryBound(to: CChar.self), accept.utf8CodeUnitCount) == 0
            ? self.accept : nil
    }

    func withSignedParts<Result>(_ body: (SignedParts) -> Result) -> Result { body(parts) }
}

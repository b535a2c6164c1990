/// A request as the authentication step reads it (signature v1: `SignatureV1`,
/// `ClientAuthenticator`; the EMAS and DoH JSON signatures: `authenticateEMAS`,
/// `authenticateDoHJSON`): what both the general path's `HTTPRequest` and the fast path's
/// borrowed `RequestHead` provide, so that the one implementation of each check runs on either,
/// the fast path's without copying the request.
public protocol SignedRequest {
    /// Calls `body` with the request's parts, whose bytes are valid during the call only.
    func withSignedParts<Result>(_ body: (SignedParts) -> Result) -> Result
}

/// The parts of a request a signature covers or carries, borrowed (see `SignedRequest`).
public struct SignedParts {
    /// The method, e.g. `GET`.
    public let method: UnsafeRawBufferPointer
    /// The path without the query string, percent-decoded.
    public let path: UnsafeRawBufferPointer
    /// The query arguments, percent-decoded: the first value of each name, in the order received
    /// (a name without `=` has the empty value), as `QueryArguments` keeps them.
    public let arguments: UnsafeBufferPointer<ArgumentPair>
    /// Some name came more than once (only its first value is in `arguments`).
    public let hasRepeatedNames: Bool
    /// The `Authorization` header's value, nil when there is none.
    public let authorization: UnsafeRawBufferPointer?
    public let body: UnsafeRawBufferPointer
}

extension SignedParts {
    /// The value of the argument `name` (its first; empty for a name without `=`), nil when the
    /// request has none: what `QueryArguments`' subscript gives, as bytes.
    func argument(_ name: StaticString) -> UnsafeRawBufferPointer? {
        for pair in arguments where pair.name.equals(name) { return pair.value }
        return nil
    }
}

/// One query argument of `SignedParts`: its decoded name and value.
public struct ArgumentPair {
    public let name: UnsafeRawBufferPointer
    public let value: UnsafeRawBufferPointer
}

/// Gathers the arguments of `SignedParts` into memory its caller provides, as a reader hands
/// them over one by one in the order received (libmicrohttpd's iterator, a test's list): the
/// first value of each name is kept, a name seen again only sets `hasRepeatedNames`
/// (`QueryArguments.append` keeps them the same way).
struct ArgumentPairCollector {
    private let storage: UnsafeMutableBufferPointer<ArgumentPair>
    private(set) var count = 0
    private(set) var hasRepeatedNames = false

    /// `storage` must hold every argument the reader will offer.
    init(into storage: UnsafeMutableBufferPointer<ArgumentPair>) { self.storage = storage }

    /// Takes one argument; a `value` of nil (a name without `=`) is the empty value.
    mutating func offer(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        // A request carries a handful of arguments: a scan is cheaper than any table.
        for index in 0..<count where storage[index].name.hasSameBytes(as: name) {
            hasRepeatedNames = true
            return
        }
        precondition(count < storage.count, "ArgumentPairCollector: more arguments than its storage holds")
        storage[count] = ArgumentPair(name: name, value: value ?? UnsafeRawBufferPointer(start: nil, count: 0))
        count += 1
    }

    /// The arguments taken, in the order received.
    var pairs: UnsafeBufferPointer<ArgumentPair> { UnsafeBufferPointer(rebasing: storage[..<count]) }
}

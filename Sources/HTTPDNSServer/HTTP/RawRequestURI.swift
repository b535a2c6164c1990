#if canImport(Glibc)
    import Glibc
#endif

/// What the request-target looked like before libmicrohttpd decoded it, to tell whether the
/// method and URL it hands the access handler are the whole of them. libmicrohttpd 0.9.75 gives
/// the path only as a C string, decoded in place: a `%00` in the path, or a raw NUL byte anywhere
/// in the request line (which it reads as C strings too: the rest of the method, path or query
/// is then dropped), would make the service answer a shorter request than the one sent. Read in
/// `MHD_OPTION_URI_LOG_CALLBACK`, before anything is decoded; checked in the access handler.
struct RawRequestURI {
    /// Bytes up to the first NUL: the whole request-target unless it holds a raw NUL.
    let length: Int
    /// The path (before `?`) holds `%00`.
    let pathHasEncodedNUL: Bool
    /// The query holds more `&`-separated arguments than `RequestHeadLimits.maximumArguments`.
    let hasTooManyArguments: Bool

    /// Reads `uri` (vectorised C scans: its length, then `?` and `%` in the path; the `%00` test
    /// runs only on a path with escapes; the arguments are counted only in a query long enough
    /// to hold more than `RequestHeadLimits.maximumArguments`).
    ///
    /// A query with more arguments than that is emptied where it lies, before libmicrohttpd
    /// parses it: 0.9.75 keeps every argument in the connection's memory pool (`connectionMemoryLimit`)
    /// and, when the pool runs out, answers an HTML 431 or closes the connection without a word.
    /// Emptied, the request reaches the access handler, which refuses it with a JSON 414
    /// (`RequestHeadLimits.refusal`). The bytes are libmicrohttpd's own read buffer, which it
    /// rewrites in place itself right after this callback (it cuts the target at `?` and splits
    /// the arguments there).
    init(_ uri: UnsafePointer<CChar>) {
        let start = UnsafeRawPointer(uri)
        length = strlen(uri)
        let pathLength = memchr(start, Int32(UInt8(ascii: "?")), length).map { UnsafeRawPointer($0) - start } ?? length
        hasTooManyArguments = Self.holdsTooManyArguments(start + pathLength, length - pathLength)
        if hasTooManyArguments {
            UnsafeMutablePointer(mutating: uri)[pathLength + 1] = 0
        }
        var encodedNUL = false
        var from = 0
        while let percent = memchr(start + from, Int32(UInt8(ascii: "%")), pathLength - from) {
            let at = UnsafeRawPointer(percent) - start
            if at + 2 < pathLength, uri[at + 1] == CChar(UInt8(ascii: "0")), uri[at + 2] == CChar(UInt8(ascii: "0")) {
                encodedNUL = true
                break
            }
            from = at + 1
        }
        pathHasEncodedNUL = encodedNUL
    }

    /// True when `method`, `url` and `version` (the access handler's) are what this request line
    /// holds: no `%00` in the path, the target ends where the version begins, and only spaces
    /// lie between the method's end and the target (libmicrohttpd 0.9.75 parses the request
    /// line in place: `method SP+ target SP version`, each separator overwritten by a NUL, the
    /// target decoded where it lies); false when a NUL cut the method or the target short.
    func isWhole(method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, version: UnsafePointer<CChar>) -> Bool {
        let target = UnsafeRawPointer(url)
        guard !pathHasEncodedNUL, target + length + 1 == UnsafeRawPointer(version) else { return false }
        var gap = UnsafeRawPointer(method) + strlen(method) + 1
        guard gap <= target else { return false }
        while gap < target {
            guard gap.load(as: UInt8.self) == UInt8(ascii: " ") else { return false }
            gap += 1
        }
        return true
    }

    /// Whether `query` (`?` and what follows it, `count` bytes; none when the target has no
    /// query) holds more arguments than the limit. A query shorter than the limit cannot (n
    /// arguments need n - 1 separators) and is not scanned; a longer one is scanned only until
    /// one separator past the limit.
    private static func holdsTooManyArguments(_ query: UnsafeRawPointer, _ count: Int) -> Bool {
        let limit = RequestHeadLimits.maximumArguments
        guard count > limit else { return false }
        var found = 1
        var from = 1
        while found <= limit, let ampersand = memchr(query + from, Int32(UInt8(ascii: "&")), count - from) {
            found += 1
            from = UnsafeRawPointer(ampersand) - query + 1
        }
        return found > limit
    }

    /// The 400 for a request whose target was cut short by a NUL.
    static var refusal: APIError {
        APIError(
            .invalidParameter,
            "the request line holds a NUL byte (%00 in the path, or a raw NUL): refused rather than read up to it")
    }
}

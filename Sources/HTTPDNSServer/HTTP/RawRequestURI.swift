#if canImport(Glibc)
import Glibc
#endif

/// What the request-target looked like before libmicrohttpd decoded it, to tell whether the URL
/// it hands the access handler is the whole of it. libmicrohttpd 0.9.75 gives the path only as a
/// C string, decoded in place: a `%00` in the path, or a raw NUL byte anywhere in the request
/// line (which it reads as a C string too: the rest of the path and query is then dropped), would
/// make the service answer a shorter request than the one sent. Read in
/// `MHD_OPTION_URI_LOG_CALLBACK`, before anything is decoded; checked in the access handler.
struct RawRequestURI {
    /// Bytes up to the first NUL: the whole request-target unless it holds a raw NUL.
    let length: Int
    /// The path (before `?`) holds `%00`.
    let pathHasEncodedNUL: Bool

    /// Reads `uri` (vectorised C scans: its length, then `?` and `%` in the path; the `%00` test
    /// runs only on a path with escapes).
    init(_ uri: UnsafePointer<CChar>) {
        let start = UnsafeRawPointer(uri)
        length = strlen(uri)
        let pathLength = memchr(start, Int32(UInt8(ascii: "?")), length).map { UnsafeRawPointer($0) - start } ?? length
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

    /// True when `url` and `version` (the access handler's) are what this request-target decodes
    /// to: no `%00` in the path, and the target ends where the version begins (libmicrohttpd
    /// decodes the target in place in the request line, `url` at its start, one separator before
    /// `version`); false when a NUL cut it short.
    func isWhole(url: UnsafePointer<CChar>, version: UnsafePointer<CChar>) -> Bool {
        !pathHasEncodedNUL && UnsafeRawPointer(url) + length + 1 == UnsafeRawPointer(version)
    }

    /// The 400 for a request whose target was cut short by a NUL.
    static var refusal: APIError {
        APIError(
            .invalidParameter,
            "the request line holds a NUL byte (%00 in the path, or a raw NUL): refused rather than read up to it")
    }
}

#if canImport(Glibc)
    import Glibc
#endif

extension UnsafeRawBufferPointer {
    /// True when both hold the same bytes (one `memcmp`): how names kept as bytes are compared
    /// on the request path, not through generic sequence comparison.
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        return count == 0 || memcmp(baseAddress!, other.baseAddress!, count) == 0
    }

    /// True when these bytes are exactly `text`'s UTF-8.
    package func hasSameBytes(as text: String) -> Bool {
        guard count == text.utf8.count else { return false }
        var text = text
        return text.withUTF8 { hasSameBytes(as: UnsafeRawBufferPointer($0)) }
    }
}

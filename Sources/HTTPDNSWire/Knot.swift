import CKnot

/// The one place libknot's results are checked: every call that returns a `knot_error` code or
/// a pointer goes through `check` or `require`, so no failure is ever read as a value.
enum Knot {
    /// Throws unless `result` is `KNOT_EOK`. `malformed`: the call was reading input, so any
    /// failure means the input is bad (`.malformed`); otherwise it is `.library`.
    static func check(_ result: Int32, _ call: StaticString, malformed: Bool = false) throws(DNSMessageError) {
        guard result != KNOT_EOK.rawValue else { return }
        throw DNSMessageError(malformed ? .malformed : .library, "\(call): \(text(result))", underlying: result)
    }

    /// `pointer`, or an error naming `call` when it is NULL: `.malformed` when the call was
    /// reading input (e.g. a name it cannot convert), else `.library` (allocation failure).
    static func require<T>(_ pointer: T?, _ call: StaticString, malformed: Bool = false) throws(DNSMessageError) -> T {
        guard let pointer else {
            throw DNSMessageError(
                malformed ? .malformed : .library, "\(call) returned NULL",
                underlying: malformed ? KNOT_EINVAL.rawValue : KNOT_ENOMEM.rawValue)
        }
        return pointer
    }

    /// `knot_strerror` of a result code.
    static func text(_ result: Int32) -> String {
        knot_strerror(result).map { String(cString: $0) } ?? "error \(result)"
    }
}

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

    /// `pointer`, or a `.library` error naming `call` when it is NULL (libknot's allocation failure).
    static func require<T>(_ pointer: T?, _ call: StaticString) throws(DNSMessageError) -> T {
        guard let pointer else { throw DNSMessageError(.library, "\(call) returned NULL", underlying: KNOT_ENOMEM.rawValue) }
        return pointer
    }

    /// `knot_strerror` of a result code.
    static func text(_ result: Int32) -> String {
        knot_strerror(result).map { String(cString: $0) } ?? "error \(result)"
    }
}

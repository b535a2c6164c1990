#if canImport(Glibc)
    import Glibc
#endif

/// The query arguments of a request (the first value of each name), kept as one byte buffer of
/// `name NUL value NUL` pairs: building it costs one allocation and no hashing, and a lookup is a
/// scan of a few dozen bytes, cheaper than a dictionary for the handful of arguments a request
/// carries.
public struct QueryArguments: Sendable, ExpressibleByDictionaryLiteral {
    private var storage: [UInt8] = []
    /// Some name came more than once (only its first value is kept): a signed request is refused
    /// then, as the signature would cover values the service never reads.
    public private(set) var hasRepeatedNames = false
    /// The 400 for the first argument whose decoded name or value held a control character or
    /// invalid UTF-8 (`DecodedArgument`; that argument is not stored); nil when every argument is
    /// acceptable. The request pipeline answers it before anything else reads the arguments, so
    /// every stored name and value is valid UTF-8 and reads back as exactly the bytes sent.
    public private(set) var refusal: APIError?
    /// How many (name, first value) pairs are stored.
    public private(set) var count = 0

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { append(name: name, value: value) }
    }

    public init(_ dictionary: [String: String]) {
        for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) { append(name: name, value: value) }
    }

    /// Adds a pair unless `name` is there already (the first value wins). A pair whose name or
    /// value holds a control character (`DecodedArgument`) is not stored: it sets `refusal`.
    public mutating func append(name: String, value: String) {
        if let control = DecodedArgument.firstControl(in: name.utf8) ?? DecodedArgument.firstControl(in: value.utf8) {
            refuse(name: name.utf8, control: control)
            return
        }
        guard self[name] == nil else {
            hasRepeatedNames = true
            return
        }
        storage.append(contentsOf: name.utf8)
        storage.append(0)
        storage.append(contentsOf: value.utf8)
        storage.append(0)
        count += 1
    }

    /// Adds a pair from libmicrohttpd's decoded bytes (`MHD_get_connection_values_n` gives their
    /// lengths: a `%00` is a byte of the value, not its end), first value wins; a value of nil
    /// (a name without `=`) is the empty value. Checked as `append(name:value:)` is, and for
    /// valid UTF-8 (a `String` always is).
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        let value = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
        if let problem = DecodedArgument.problem(in: name) ?? DecodedArgument.problem(in: value) {
            if refusal == nil { refusal = DecodedArgument.refusal(name: DecodedArgument.shown(name), problem: problem) }
            return
        }
        guard find(name) == nil else {
            hasRepeatedNames = true
            return
        }
        // Room for a typical query at once: growing from the first pair's size reallocated the
        // buffer on nearly every request (`host=` plus a name is already past the first step).
        if storage.capacity == 0 { storage.reserveCapacity(96) }
        storage.append(contentsOf: name)
        storage.append(0)
        storage.append(contentsOf: value)
        storage.append(0)
        count += 1
    }

    /// Keeps the first refused argument's 400.
    private mutating func refuse<Bytes: Collection<UInt8>>(name: Bytes, control: UInt8) {
        if refusal == nil { refusal = DecodedArgument.refusal(name: DecodedArgument.shown(name), control: control) }
    }

    public subscript(name: String) -> String? {
        var name = name
        return name.withUTF8 { bytes in
            find(UnsafeRawBufferPointer(bytes)).map { range in
                storage.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
            }
        }
    }

    public var isEmpty: Bool { storage.isEmpty }

    /// Every (name, first value) pair, in the order received: the bytes stored, which are valid
    /// UTF-8 (so no U+FFFD stands in for anything a client sent).
    public var pairs: [(name: String, value: String)] {
        storage.withUnsafeBufferPointer { buffer in
            var result: [(name: String, value: String)] = []
            Self.forEachPair(buffer) { name, value in
                result.append(
                    (
                        String(decoding: UnsafeBufferPointer(rebasing: buffer[name]), as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(rebasing: buffer[value]), as: UTF8.self)
                    ))
                return true
            }
            return result
        }
    }

    /// Calls `body` with the bytes of every (name, first value) pair, in the order received,
    /// listed in a temporary buffer (`SignedParts.arguments`: the signature check reads them
    /// without a `String`); the pointers are valid during the call only.
    func withPairs<Result>(_ body: (UnsafeBufferPointer<ArgumentPair>) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: ArgumentPair.self, capacity: max(count, 1)) { pairs in
            storage.withUnsafeBufferPointer { buffer in
                var listed = 0
                Self.forEachPair(buffer) { name, value in
                    pairs[listed] = ArgumentPair(
                        name: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[name])),
                        value: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[value])))
                    listed += 1
                    return true
                }
                return body(UnsafeBufferPointer(rebasing: pairs[..<listed]))
            }
        }
    }

    /// The range of the value of `name` in `storage`.
    private func find(_ name: UnsafeRawBufferPointer) -> Range<Int>? {
        storage.withUnsafeBufferPointer { buffer in
            var found: Range<Int>?
            Self.forEachPair(buffer) { nameRange, valueRange in
                guard nameRange.count == name.count,
                    name.isEmpty || memcmp(buffer.baseAddress! + nameRange.lowerBound, name.baseAddress!, name.count) == 0
                else { return true }
                found = valueRange
                return false
            }
            return found
        }
    }

    /// Calls `body` with the ranges of each stored name and value (`memchr` for the NULs that end
    /// them: the signature check reads the arguments several times per request) until it
    /// returns false.
    private static func forEachPair(_ buffer: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>, Range<Int>) -> Bool) {
        guard let base = buffer.baseAddress else { return }
        var index = 0
        while index < buffer.count {
            let nameEnd = UnsafeRawPointer(memchr(base + index, 0, buffer.count - index)!) - UnsafeRawPointer(base)
            let valueEnd = UnsafeRawPointer(memchr(base + nameEnd + 1, 0, buffer.count - nameEnd - 1)!) - UnsafeRawPointer(base)
            guard body(index..<nameEnd, (nameEnd + 1)..<valueEnd) else { return }
            index = valueEnd + 1
        }
    }
}

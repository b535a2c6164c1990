/// The query arguments of a request (the first value of each name), kept as one byte buffer of
/// `name NUL value NUL` pairs: building it costs one allocation and no hashing, and a lookup is a
/// scan of a few dozen bytes, cheaper than a dictionary for the handful of arguments a request
/// carries.
public struct QueryArguments: Sendable, ExpressibleByDictionaryLiteral {
    private var storage: [UInt8] = []
    /// Some name came more than once (only its first value is kept): a signed request is refused
    /// then, as the signature would cover values the service never reads.
    public private(set) var hasRepeatedNames = false

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { append(name: name, value: value) }
    }

    public init(_ dictionary: [String: String]) {
        for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) { append(name: name, value: value) }
    }

    /// Adds a pair unless `name` is there already (the first value wins). Names and values
    /// containing NUL cannot be stored and are dropped.
    public mutating func append(name: String, value: String) {
        guard !name.utf8.contains(0), !value.utf8.contains(0) else { return }
        guard self[name] == nil else {
            hasRepeatedNames = true
            return
        }
        storage.append(contentsOf: name.utf8)
        storage.append(0)
        storage.append(contentsOf: value.utf8)
        storage.append(0)
    }

    /// Adds a pair from C strings (what libmicrohttpd hands over), first value wins.
    mutating func append(name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) {
        let nameBytes = UnsafeRawBufferPointer(start: name, count: strlenOf(name))
        guard find(nameBytes) == nil else {
            hasRepeatedNames = true
            return
        }
        // Room for a typical query at once: growing from the first pair's size reallocated the
        // buffer on nearly every request (`host=` plus a name is already past the first step).
        if storage.capacity == 0 { storage.reserveCapacity(96) }
        storage.append(contentsOf: nameBytes)
        storage.append(0)
        if let value { storage.append(contentsOf: UnsafeRawBufferPointer(start: value, count: strlenOf(value))) }
        storage.append(0)
    }

    public subscript(name: String) -> String? {
        var name = name
        return name.withUTF8 { bytes in
            find(UnsafeRawBufferPointer(bytes)).map { String(decoding: storage[$0], as: UTF8.self) }
        }
    }

    public var isEmpty: Bool { storage.isEmpty }

    /// Every (name, first value) pair, in the order received.
    public var pairs: [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var index = 0
        while index < storage.count {
            let nameEnd = storage[index...].firstIndex(of: 0)!
            let valueEnd = storage[(nameEnd + 1)...].firstIndex(of: 0)!
            result.append((String(decoding: storage[index..<nameEnd], as: UTF8.self), String(decoding: storage[(nameEnd + 1)..<valueEnd], as: UTF8.self)))
            index = valueEnd + 1
        }
        return result
    }

    /// The range of the value of `name` in `storage`.
    private func find(_ name: UnsafeRawBufferPointer) -> Range<Int>? {
        var index = 0
        while index < storage.count {
            let nameEnd = storage[index...].firstIndex(of: 0)!
            let valueEnd = storage[(nameEnd + 1)...].firstIndex(of: 0)!
            if nameEnd - index == name.count && storage[index..<nameEnd].elementsEqual(name) {
                return (nameEnd + 1)..<valueEnd
            }
            index = valueEnd + 1
        }
        return nil
    }

    private func strlenOf(_ pointer: UnsafePointer<CChar>) -> Int {
        var count = 0
        while pointer[count] != 0 { count += 1 }
        return count
    }
}

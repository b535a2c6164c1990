import HTTPDNSCore
import HTTPDNSCrypto

#if canImport(Glibc)
    import Glibc
#endif

extension SignatureV1 {
    /// A request's query arguments as the canonical string reads them: how many, their bytes
    /// (to size its buffer), and a function that calls its argument with the bytes of each
    /// (name, value) pair.
    struct ArgumentBytes {
        var count: Int
        /// The bytes of every name and value together.
        var byteCount: Int
        var forEach: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Void

        init(_ query: QueryArguments) {
            count = query.count
            byteCount = query.byteCount
            forEach = query.forEachPair
        }

        init(_ arguments: [(name: String, value: String)]) {
            count = arguments.count
            byteCount = arguments.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
            forEach = { visit in
                for (name, value) in arguments {
                    var name = name, value = value
                    name.withUTF8 { nameBytes in value.withUTF8 { visit(UnsafeRawBufferPointer(nameBytes), UnsafeRawBufferPointer($0)) } }
                }
            }
        }
    }

    /// Calls `use` with the canonical string's bytes, written in one pass into one temporary
    /// buffer (on the stack for any usual request): the server computes it on every signed
    /// request. The signed arguments are percent-encoded into the buffer's second part, their
    /// encoded names sorted in place (insertion sort: a request has a handful), then copied
    /// after the path.
    static func withCanonicalBytes<Result>(
        method: String, path: String, arguments: ArgumentBytes, expiry: String, body: [UInt8],
        _ use: (UnsafeRawBufferPointer) throws(CryptoError) -> Result
    ) throws(CryptoError) -> Result {
        // Every argument encoded, with its `=` and `&` (the signature's are counted too: one
        // pass over the arguments, not two).
        let encodedBound = 3 * arguments.byteCount + 2 * arguments.count
        let bodyHash = body.isEmpty ? emptyBodyHash : Digest.hex(try Digest.sha256(body))
        var method = method, path = path, expiry = expiry
        let headBound = scheme.utf8.count + method.utf8.count + 3 * path.utf8.count + expiry.utf8.count + bodyHash.utf8.count + 5
        let outcome = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: headBound + 2 * encodedBound) { buffer in
            withUnsafeTemporaryAllocation(of: EncodedArgument.self, capacity: max(arguments.count, 1)) { entries in
                var writer = CanonicalWriter(base: buffer.baseAddress!)
                writer.append(scheme)
                writer.newline()
                method.withUTF8 { writer.append(UnsafeRawBufferPointer($0)) }
                writer.newline()
                path.withUTF8 { writer.appendEncoded(UnsafeRawBufferPointer($0), keepingSlash: true) }
                writer.newline()
                let scratch = buffer.baseAddress! + headBound + encodedBound
                let count = encodeSorted(arguments, into: scratch, entries: entries.baseAddress!)
                for index in 0..<count {
                    if index > 0 { writer.append(UInt8(ascii: "&")) }
                    let entry = entries[index]
                    writer.append(UnsafeRawBufferPointer(start: scratch + entry.start, count: entry.end - entry.start))
                }
                writer.newline()
                expiry.withUTF8 { writer.append(UnsafeRawBufferPointer($0)) }
                writer.newline()
                writer.append(bodyHash)
                return Swift.Result { () throws(CryptoError) in
                    try use(UnsafeRawBufferPointer(start: buffer.baseAddress, count: writer.count))
                }
            }
        }
        return try outcome.get()
    }

    /// One signed argument encoded as `name=value` at `start..<end` of the scratch space, its
    /// name ending at `nameEnd`.
    struct EncodedArgument {
        var start: Int
        var nameEnd: Int
        var end: Int
    }

    /// Encodes every argument but the signature's into `scratch` and fills `entries` with them,
    /// sorted by encoded name; returns how many there are.
    private static func encodeSorted(
        _ arguments: ArgumentBytes, into scratch: UnsafeMutablePointer<UInt8>, entries: UnsafeMutablePointer<EncodedArgument>
    ) -> Int {
        var count = 0, position = 0
        arguments.forEach { name, value in
            guard !isSignatureArgument(name) else { return }
            let start = position
            position += PercentEncoding.write(name, to: scratch + position)
            let nameEnd = position
            scratch[position] = UInt8(ascii: "=")
            position += 1
            position += PercentEncoding.write(value, to: scratch + position)
            // Insertion: the entries before `count` are sorted; a name equal to one of them
            // (only from `ArgumentBytes(_:)` of strings) goes after it, as the order received has it.
            var slot = count
            while slot > 0, encodedPrecedes(scratch, start..<nameEnd, entries[slot - 1].start..<entries[slot - 1].nameEnd) {
                entries[slot] = entries[slot - 1]
                slot -= 1
            }
            entries[slot] = EncodedArgument(start: start, nameEnd: nameEnd, end: position)
            count += 1
        }
        return count
    }

    /// Whether the bytes at `lhs` of `scratch` sort before those at `rhs`.
    private static func encodedPrecedes(_ scratch: UnsafeMutablePointer<UInt8>, _ lhs: Range<Int>, _ rhs: Range<Int>) -> Bool {
        let common = min(lhs.count, rhs.count)
        let order = common == 0 ? 0 : memcmp(scratch + lhs.lowerBound, scratch + rhs.lowerBound, common)
        return order != 0 ? order < 0 : lhs.count < rhs.count
    }

    /// One of `argumentNames` (compared without hashing: this runs for every argument).
    static func isSignatureArgument(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 1: name[0] == UInt8(ascii: "t")
        case 3: name[0] == UInt8(ascii: "k") && name[1] == UInt8(ascii: "i") && name[2] == UInt8(ascii: "d")
        case 4: name[0] == UInt8(ascii: "s") && name[1] == UInt8(ascii: "i") && name[2] == UInt8(ascii: "g") && name[3] == UInt8(ascii: "n")
        default: false
        }
    }
}

/// Appends bytes at a position of a buffer sized for them beforehand.
private struct CanonicalWriter {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0

    mutating func append(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    mutating func newline() { append(UInt8(ascii: "\n")) }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        (base + count).update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    mutating func appendEncoded(_ bytes: UnsafeRawBufferPointer, keepingSlash: Bool) {
        count += PercentEncoding.write(bytes, keepingSlash: keepingSlash, to: base + count)
    }
}

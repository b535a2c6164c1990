import HTTPDNSCore
import HTTPDNSCrypto

#if canImport(Glibc)
    import Glibc
#endif

extension SignatureV1 {
    /// The canonical string's bytes for a request given as text (`withCanonicalBytes`); the
    /// arguments in their order, a name given twice kept twice.
    static func canonicalBytes(
        method: String, path: String, arguments: [(name: String, value: String)], expiry: String, body: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        // Every text in one buffer, the arguments listed as ranges of it.
        var text: [UInt8] = Array(method.utf8) + Array(path.utf8) + Array(expiry.utf8)
        var ranges: [(name: Range<Int>, value: Range<Int>)] = []
        for (name, value) in arguments {
            let nameStart = text.count
            text += name.utf8
            let valueStart = text.count
            text += value.utf8
            ranges.append((nameStart..<valueStart, valueStart..<text.count))
        }
        let methodEnd = method.utf8.count, pathEnd = methodEnd + path.utf8.count, expiryEnd = pathEnd + expiry.utf8.count
        return try text.withUnsafeBytes { text in
            let pairs = ranges.map {
                ArgumentPair(name: UnsafeRawBufferPointer(rebasing: text[$0.name]), value: UnsafeRawBufferPointer(rebasing: text[$0.value]))
            }
            return pairs.withUnsafeBufferPointer { pairs in
                body.withUnsafeBytes { body in
                    let parts = SignedParts(
                        method: UnsafeRawBufferPointer(rebasing: text[..<methodEnd]),
                        path: UnsafeRawBufferPointer(rebasing: text[methodEnd..<pathEnd]), arguments: pairs, hasRepeatedNames: false,
                        authorization: nil, body: body)
                    return Swift.Result { () throws(CryptoError) in
                        try withCanonicalBytes(parts, expiry: UnsafeRawBufferPointer(rebasing: text[pathEnd..<expiryEnd])) { Array($0) }
                    }
                }
            }
        }.get()
    }

    /// Calls `use` with the canonical string of the request of `parts` for expiry `expiry`,
    /// written in one pass into one temporary buffer (on the stack for any usual request): the
    /// server computes it on every signed request. The signed arguments are percent-encoded into
    /// the buffer's second part, their encoded names sorted in place (insertion sort: a request
    /// has a handful), then copied after the path.
    static func withCanonicalBytes<Result>(
        _ parts: SignedParts, expiry: UnsafeRawBufferPointer, _ use: (UnsafeRawBufferPointer) throws(CryptoError) -> Result
    ) throws(CryptoError) -> Result {
        let arguments = parts.arguments
        // Every argument encoded, with its `=` and `&` (the signature's are counted too: one
        // pass over the arguments, not two).
        var argumentBytes = 0
        for pair in arguments { argumentBytes += pair.name.count + pair.value.count }
        let encodedBound = 3 * argumentBytes + 2 * arguments.count
        let bodyHash = parts.body.isEmpty ? emptyBodyHash : Digest.hex(try Digest.sha256(parts.body))
        let headBound = scheme.utf8.count + parts.method.count + 3 * parts.path.count + expiry.count + bodyHash.utf8.count + 5
        let outcome = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: headBound + 2 * encodedBound) { buffer in
            withUnsafeTemporaryAllocation(of: EncodedArgument.self, capacity: max(arguments.count, 1)) { entries in
                var writer = CanonicalWriter(base: buffer.baseAddress!)
                writer.append(scheme)
                writer.newline()
                writer.append(parts.method)
                writer.newline()
                writer.appendEncoded(parts.path, keepingSlash: true)
                writer.newline()
                let scratch = buffer.baseAddress! + headBound + encodedBound
                let count = encodeSorted(arguments, into: scratch, entries: entries.baseAddress!)
                for index in 0..<count {
                    if index > 0 { writer.append(UInt8(ascii: "&")) }
                    let entry = entries[index]
                    writer.append(UnsafeRawBufferPointer(start: scratch + entry.start, count: entry.end - entry.start))
                }
                writer.newline()
                writer.append(expiry)
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
        _ arguments: UnsafeBufferPointer<ArgumentPair>, into scratch: UnsafeMutablePointer<UInt8>,
        entries: UnsafeMutablePointer<EncodedArgument>
    ) -> Int {
        var count = 0, position = 0
        for pair in arguments where !isSignatureArgument(pair.name) {
            let name = pair.name, value = pair.value
            let start = position
            position += PercentEncoding.write(name, to: scratch + position)
            let nameEnd = position
            scratch[position] = UInt8(ascii: "=")
            position += 1
            position += PercentEncoding.write(value, to: scratch + position)
            // Insertion: the entries before `count` are sorted; a name equal to one of them
            // (only from `canonicalBytes` of strings) goes after it, as the order received has it.
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

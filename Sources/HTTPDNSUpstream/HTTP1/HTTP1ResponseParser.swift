#if canImport(Glibc)
    import Glibc
#endif

/// Reads one HTTP/1.x response from bytes that arrive in pieces split anywhere: the status line,
/// the header fields (interim 1xx responses skipped), and the body framed by `Content-Length`, by
/// chunked transfer coding (extensions and trailers allowed) or by the end of the connection.
///
/// A pure value: no sockets, no clock, no Foundation. The final response's header lines are kept
/// in ``headerBlock`` exactly as ``EasyHandle`` keeps what curl hands its header callback (each
/// `Name: value` line with its line ending, then the empty line; trailer fields after it), and the
/// same header and body limits apply.
struct HTTP1ResponseParser {
    /// Why a response cannot be read.
    enum Failure: Error, Equatable {
        case badStatusLine
        case badHeaderLine
        case badContentLength
        case badChunk
        case headerTooLarge
        case bodyTooLarge
        /// The connection ended before the response did.
        case truncated
    }

    enum State: Equatable {
        case statusLine
        case headers
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilEOF
        case done
    }

    let maximumHeaderSize: Int
    let maximumBodySize: Int
    /// The final response's status code (0 until its status line is read).
    private(set) var status = 0
    private(set) var headerBlock: [UInt8] = []
    private(set) var body: [UInt8] = []
    private(set) var state = State.statusLine
    /// Whether any byte of this response arrived.
    private(set) var receivedAny = false
    /// A line split between reads (a status, header, chunk-size or trailer line), gathered.
    private var line: [UInt8] = []
    private var head = HeadFields()

    /// What the header fields of the response being read say about framing and the connection.
    struct HeadFields {
        var isHTTP10 = false
        var contentLength: Int?
        var chunked = false
        /// A transfer coding other than a final `chunked`: the body runs until the connection ends.
        var otherCoding = false
        var close = false
        var keepAlive = false
    }

    init(maximumHeaderSize: Int = EasyHandle.maximumHeaderSize, maximumBodySize: Int = EasyHandle.maximumBodySize) {
        self.maximumHeaderSize = maximumHeaderSize
        self.maximumBodySize = maximumBodySize
    }

    var isComplete: Bool { state == .done }

    /// Whether the connection may carry another request once this response is complete:
    /// HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`, never when
    /// the body ran until the end of the connection or both framings were given.
    var keepAlive: Bool {
        if head.close || head.otherCoding || (head.chunked && head.contentLength != nil) { return false }
        if head.isHTTP10 && !head.keepAlive { return false }
        return head.chunked || head.contentLength != nil || bodyless
    }

    /// Starts over for the next response on the same connection. The previous header block and
    /// body are left to whoever took them: new arrays, so that theirs are not copied.
    mutating func reset() {
        status = 0
        headerBlock = []
        body = []
        state = .statusLine
        receivedAny = false
        line.removeAll(keepingCapacity: true)
        head = HeadFields()
    }

    /// Consumes `input` up to the end of the response; returns how many bytes it used (fewer than
    /// given only once the response is complete: the rest belongs to no request).
    mutating func consume(_ input: UnsafeRawBufferPointer) throws(Failure) -> Int {
        if !input.isEmpty { receivedAny = true }
        var index = 0
        while index < input.count {
            switch state {
            case .done:
                return index
            case .fixedBody(let remaining):
                let count = min(remaining, input.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + count)]))
                index += count
                state = count == remaining ? .done : .fixedBody(remaining: remaining - count)
            case .chunkData(let remaining):
                let count = min(remaining, input.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + count)]))
                index += count
                state = count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            case .untilEOF:
                let count = input.count - index
                guard body.count + count <= maximumBodySize else { throw .bodyTooLarge }
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index...]))
                index += count
            case .statusLine, .headers, .chunkSize, .chunkDataEnd, .trailers:
                try takeLine(input, &index)
            }
        }
        return index
    }

    /// The connection ended: completes a body that runs until then; anything else unfinished is
    /// `.truncated`.
    mutating func finishAtEOF() throws(Failure) {
        switch state {
        case .done: return
        case .untilEOF: state = .done
        default: throw .truncated
        }
    }

    /// Takes input up to and including the next LF as a line: handled at once when it lies whole
    /// in `input` (the usual case: no copy), else gathered in `line` first.
    private mutating func takeLine(_ input: UnsafeRawBufferPointer, _ index: inout Int) throws(Failure) {
        let start = input.baseAddress! + index
        let rest = input.count - index
        let newline = memchr(start, Int32(UInt8(ascii: "\n")), rest)
        let length = newline.map { UnsafeRawPointer($0) - start + 1 } ?? rest
        let isChunkLine = state == .chunkSize || state == .chunkDataEnd
        let limit = isChunkLine ? 4096 : maximumHeaderSize - headerBlock.count
        guard line.count + length <= limit else { throw isChunkLine ? .badChunk : .headerTooLarge }
        let piece = UnsafeRawBufferPointer(start: start, count: length)
        index += length
        guard newline != nil else {
            line.append(contentsOf: piece)
            return
        }
        guard !line.isEmpty else {
            try lineComplete(piece)
            return
        }
        line.append(contentsOf: piece)
        var whole: [UInt8] = []
        swap(&whole, &line)
        defer {
            whole.removeAll(keepingCapacity: true)
            swap(&whole, &line)
        }
        let outcome = whole.withUnsafeBytes { raw in Result { () throws(Failure) in try lineComplete(raw) } }
        try outcome.get()
    }

    /// The length of `line` without its line ending (LF or CRLF).
    private func lengthWithoutEnding(_ line: UnsafeRawBufferPointer) -> Int {
        var end = line.count
        if end > 0 && line[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end > 0 && line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return end
    }

    private mutating func lineComplete(_ line: UnsafeRawBufferPointer) throws(Failure) {
        let length = lengthWithoutEnding(line)
        switch state {
        case .statusLine:
            try statusLine(line, length: length)
        case .headers:
            if length != 0 { try head.read(line, count: length) }
            headerBlock.append(contentsOf: line)
            if length == 0 { try headEnded() }
        case .chunkSize:
            try chunkSizeLine(line, length: length)
        case .chunkDataEnd:
            guard length == 0 else { throw .badChunk }
            state = .chunkSize
        case .trailers:
            if length == 0 {
                state = .done
            } else {
                guard line.firstIndex(of: UInt8(ascii: ":")) != nil else { throw .badHeaderLine }
                headerBlock.append(contentsOf: line)
            }
        default:
            break
        }
    }

    /// `HTTP/1.x NNN reason`: a new head starts (after a 1xx, the final response's).
    private mutating func statusLine(_ line: UnsafeRawBufferPointer, length: Int) throws(Failure) {
        let prefix: StaticString = "HTTP/1."
        guard length >= 12, memcmp(line.baseAddress!, prefix.utf8Start, 7) == 0, isDigit(line[7]), line[8] == UInt8(ascii: " ") else {
            throw .badStatusLine
        }
        var code = 0
        for offset in 9..<12 {
            guard isDigit(line[offset]) else { throw .badStatusLine }
            code = code * 10 + Int(line[offset] - UInt8(ascii: "0"))
        }
        guard code >= 100, length == 12 || line[12] == UInt8(ascii: " ") else { throw .badStatusLine }
        // 101 Switching Protocols answers an upgrade request, which is never sent.
        guard code != 101 else { throw .badStatusLine }
        status = code
        head = HeadFields(isHTTP10: line[7] == UInt8(ascii: "0"))
        headerBlock.removeAll(keepingCapacity: true)
        headerBlock.reserveCapacity(512)
        state = .headers
    }

    /// The empty line after the fields: decides how the body is framed.
    private mutating func headEnded() throws(Failure) {
        if status < 200 {
            // An interim response: the final one follows.
            state = .statusLine
            return
        }
        if bodyless {
            state = .done
        } else if head.chunked {
            state = .chunkSize
        } else if head.otherCoding {
            state = .untilEOF
        } else if let length = head.contentLength {
            guard length <= maximumBodySize else { throw .bodyTooLarge }
            body.reserveCapacity(length)
            state = length == 0 ? .done : .fixedBody(remaining: length)
        } else {
            state = .untilEOF
        }
    }

    /// 204 and 304 never have a body (RFC 9112 section 6.3).
    private var bodyless: Bool { status == 204 || status == 304 }

    /// `hex-size [; extensions]`: the next chunk, or the last one (size 0) before the trailers.
    private mutating func chunkSizeLine(_ line: UnsafeRawBufferPointer, length: Int) throws(Failure) {
        var size = 0
        var index = 0
        while index < length, let digit = hexValue(line[index]) {
            guard index < 15 else { throw .badChunk }
            size = size << 4 | digit
            index += 1
        }
        guard index > 0 else { throw .badChunk }
        while index < length && (line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t")) { index += 1 }
        guard index == length || line[index] == UInt8(ascii: ";") else { throw .badChunk }
        guard body.count + size <= maximumBodySize else { throw .bodyTooLarge }
        state = size == 0 ? .trailers : .chunkData(remaining: size)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// What the fast path did with a request (`HTTPDNSService.fastPath`): answered a cache hit at
/// once, or started the lookup of the one name the cache missed, whose result is the general
/// path's (`HandlerResult`: the format's writer, the response labelled and timed as `handle` does).
public enum FastResult: ~Copyable {
    case answer(FastResponse)
    case lookup(HandlerResult)
}

/// The fast path's answer: status 200 and a body in memory from `malloc` that `HTTPServer` hands
/// to libmicrohttpd as it is (`MHD_RESPMEM_MUST_FREE`: no copy, and libmicrohttpd frees it once
/// sent). Dropped unsent, it frees its memory itself. Besides the body: its content type and
/// headers (as the format's writer gave them), and what `HTTPServer` counts and logs it under.
public struct FastResponse: ~Copyable {
    private let memory: FastBody
    public var count: Int { memory.count }
    /// Nil: `HTTPResponse.jsonType` (written from a static C string).
    public let contentType: String?
    /// `Cache-Control: max-age=` this many seconds (`CacheControl`), nil for none.
    public let maxAge: UInt32?
    /// What answered (the request-duration slot's and the access log's `source`).
    public let source: AnswerSource
    /// The route's endpoint (`Route.endpoint`), for `httpdns_http_requests_total`.
    var endpoint = 0
    /// The account, borrowed from the request (or a static string): valid during the access
    /// callback only, which is where the access log reads it.
    var account = UnsafeRawBufferPointer(start: nil, count: 0)

    /// Writes a JSON body with `write`, which gets memory for `bound` bytes and returns how many it wrote.
    init(bound: Int, source: AnswerSource, write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        memory = FastBody(bound: bound, write: write)
        contentType = nil
        maxAge = nil
        self.source = source
    }

    /// Writes a body of `contentType` with `write`, which gets memory for `bound` bytes and
    /// returns how many it wrote, or nil when it could not write it (then so is this).
    init?(
        bound: Int, source: AnswerSource, contentType: String, maxAge: UInt32?,
        write: (UnsafeMutableBufferPointer<UInt8>) -> Int?
    ) {
        guard let memory = FastBody(bound: bound, write: write) else { return nil }
        self.memory = memory
        self.contentType = contentType
        self.maxAge = maxAge
        self.source = source
    }

    /// The headers besides `Content-Type`, as the general path's `HTTPResponse` has them.
    public var headers: [(String, String)] { maxAge.map { [CacheControl.header(maxAge: $0)] } ?? [] }

    /// The body's bytes (a copy).
    public var body: [UInt8] { memory.bytes }

    /// The RCODE of a DNS message body (`application/dns-message`), nil for any other body.
    var dnsResponseCode: UInt8? {
        guard contentType == RFC8484Handler.dnsMessageType, memory.count >= 12 else { return nil }
        return memory.byte(at: 3) & 0x0F
    }

    /// Gives up the body's memory: the caller frees it (or has libmicrohttpd free it).
    consuming func take() -> UnsafeMutableRawPointer { memory.take() }
}

/// The body of a `FastResponse`: memory from `malloc`, freed when dropped unless taken.
struct FastBody: ~Copyable {
    private let base: UnsafeMutablePointer<UInt8>
    let count: Int

    /// Writes the body with `write`, which gets memory for `bound` bytes and returns how many it wrote.
    init(bound: Int, write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        base = malloc(max(bound, 1))!.bindMemory(to: UInt8.self, capacity: max(bound, 1))
        count = write(UnsafeMutableBufferPointer(start: base, count: bound))
        precondition(count <= bound, "FastResponse: body longer than its bound")
    }

    /// The same, for a writer that may fail: nil (and the memory freed) when `write` gives nil.
    init?(bound: Int, write: (UnsafeMutableBufferPointer<UInt8>) -> Int?) {
        let base = malloc(max(bound, 1))!.bindMemory(to: UInt8.self, capacity: max(bound, 1))
        guard let count = write(UnsafeMutableBufferPointer(start: base, count: bound)) else {
            free(base)
            return nil
        }
        precondition(count <= bound, "FastResponse: body longer than its bound")
        self.base = base
        self.count = count
    }

    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The byte at `index` (below `count`).
    func byte(at index: Int) -> UInt8 { base[index] }

    consuming func take() -> UnsafeMutableRawPointer {
        let pointer = UnsafeMutableRawPointer(base)
        discard self
        return pointer
    }

    deinit { free(base) }
}

extension HTTPResponse {
    /// The same answer as the general path sends it: status 200, the hit's content type,
    /// headers, body and source.
    init(hit: consuming FastResponse) {
        self.init(status: 200, contentType: hit.contentType ?? HTTPResponse.jsonType, headers: hit.headers, body: hit.body)
        source = hit.source
    }
}

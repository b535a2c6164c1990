#if canImport(Glibc)
import Glibc
#endif

/// The fast path's answer: status 200, `application/json`, and a body in memory from `malloc`
/// that `HTTPServer` hands to libmicrohttpd as it is (`MHD_RESPMEM_MUST_FREE`: no copy, and
/// libmicrohttpd frees it once sent). Dropped unsent, it frees its memory itself.
public struct FastResponse: ~Copyable {
    private let base: UnsafeMutablePointer<UInt8>
    public let count: Int

    /// Writes the body with `write`, which gets memory for `bound` bytes and returns how many it wrote.
    init(bound: Int, write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        base = malloc(max(bound, 1))!.bindMemory(to: UInt8.self, capacity: max(bound, 1))
        count = write(UnsafeMutableBufferPointer(start: base, count: bound))
        precondition(count <= bound, "FastResponse: body longer than its bound")
    }

    /// A body written elsewhere.
    init(copying body: [UInt8]) {
        self.init(bound: body.count) { buffer in
            _ = buffer.initialize(from: body)
            return body.count
        }
    }

    /// The body's bytes (a copy).
    public var body: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Gives up the memory: the caller frees it (or has libmicrohttpd free it).
    consuming func take() -> UnsafeMutableRawPointer {
        let pointer = UnsafeMutableRawPointer(base)
        discard self
        return pointer
    }

    deinit { free(base) }
}

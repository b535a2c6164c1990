import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPClient {
    /// What came back on one connection: every byte the server sent, and whether it closed the
    /// connection (false: still open when `timeout` ran out).
    public struct RawExchange: Sendable {
        public var bytes: [UInt8]
        public var closedByServer: Bool

        public var text: String { String(decoding: bytes, as: UTF8.self) }

        /// How many responses the bytes hold (status lines at the start of the text or of a line).
        public var responseCount: Int { text.components(separatedBy: "HTTP/1.1 ").count - 1 }
    }

    /// Sends `bytes` as they are on a new connection (the framing is the caller's) and reads
    /// until the server closes it or `timeout` passes, on a thread of its own.
    public func exchangeRaw(_ bytes: [UInt8]) async throws -> RawExchange {
        let client = self
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try client.exchangeRawBlocking(bytes) }) }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    private func exchangeRawBlocking(_ bytes: [UInt8]) throws -> RawExchange {
        let fd = try connectedSocket()
        defer { close(fd) }
        Self.sendAll(fd, bytes)
        var incoming: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                incoming += buffer[0..<n]
                continue
            }
            if n < 0 && errno == EINTR { continue }
            // 0: closed by the server; ECONNRESET counts as closed too. EAGAIN: the timeout.
            return RawExchange(bytes: incoming, closedByServer: n == 0 || errno == ECONNRESET)
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where log lines go: standard error. `write` writes a line at once (events: rare, and written
/// before the request that caused them is answered); `append` hands it to one background thread
/// through a bounded buffer, so a thread that logs every request (an HTTP thread writing an
/// access-log line) never waits for the disk or a slow reader of the pipe, only for a short
/// lock. Before `start` and after `stop`, `append` writes at once too. The writer writes whole
/// lines in pieces of at most `PIPE_BUF` bytes, each one write(2), so its lines never mix with
/// the ones written at once. When the buffer is full, lines are dropped and counted, and a line
/// says how many once there is room.
public final class LogSink: @unchecked Sendable {
    public static let shared = LogSink(fileDescriptor: 2, capacity: 4 << 20)

    private let fileDescriptor: Int32
    private let capacity: Int
    /// Guards the `locked_` fields and signals the writer.
    private let condition = NSCondition()
    private var locked_buffer: [UInt8] = []
    private var locked_dropped = 0
    private var locked_running = false
    private var locked_stopping = false
    private var locked_writing = false
    private let stopped = DispatchSemaphore(value: 0)

    public init(fileDescriptor: Int32, capacity: Int) {
        self.fileDescriptor = fileDescriptor
        self.capacity = capacity
    }

    /// Starts the writer thread (once).
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !locked_running else { return }
        locked_running = true
        locked_stopping = false
        let thread = Thread { [self] in
            ThreadName.setCurrent("httpdnsd-log")
            run()
        }
        thread.start()
    }

    /// Writes what is buffered and stops the writer; later lines are written at once.
    public func stop() {
        condition.lock()
        guard locked_running else {
            condition.unlock()
            return
        }
        locked_stopping = true
        condition.signal()
        condition.unlock()
        stopped.wait()
    }

    /// Waits until every line appended so far is written.
    public func flush() {
        condition.lock()
        while locked_running && (!locked_buffer.isEmpty || locked_writing) {
            condition.unlock()
            usleep(1000)
            condition.lock()
        }
        condition.unlock()
    }

    /// Writes one line (newline included) at once, from the calling thread.
    public func write(_ line: [UInt8]) { writeAll(line) }

    /// Hands one line (newline included) to the writer, or writes it at once when none runs.
    public func append(_ line: [UInt8]) {
        condition.lock()
        guard locked_running else {
            condition.unlock()
            writeAll(line)
            return
        }
        if locked_buffer.count + line.count > capacity {
            locked_dropped += 1
        } else {
            locked_buffer.append(contentsOf: line)
        }
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while locked_buffer.isEmpty && locked_dropped == 0 && !locked_stopping { condition.wait() }
            var batch: [UInt8] = []
            swap(&batch, &locked_buffer)
            let dropped = locked_dropped
            locked_dropped = 0
            let stopping = locked_stopping
            locked_writing = true
            condition.unlock()
            writeLines(batch)
            if dropped > 0 {
                writeAll(
                    Log.line(
                        .warning, "log: \(dropped) lines dropped (standard error is not read fast enough)", fields: [], format: Log.format,
                        time: Log.timestamp()))
            }
            condition.lock()
            locked_writing = false
            if stopping && locked_buffer.isEmpty {
                locked_running = false
                condition.unlock()
                stopped.signal()
                return
            }
            condition.unlock()
        }
    }

    /// Writes `bytes` (whole lines) in pieces of at most `PIPE_BUF` bytes ending at a line's end
    /// (a longer line goes alone): each piece is one atomic write(2) on a pipe.
    private func writeLines(_ bytes: [UInt8]) {
        let limit = Int(PIPE_BUF)
        var start = 0
        while start < bytes.count {
            var end = min(start + limit, bytes.count)
            if end < bytes.count {
                if let newline = bytes[start..<end].lastIndex(of: UInt8(ascii: "\n")) {
                    end = newline + 1
                } else {
                    end = (bytes[end...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count - 1) + 1
                }
            }
            writeAll(Array(bytes[start..<end]))
            start = end
        }
    }

    /// write(2) until every byte is out (partial writes, EINTR); other errors drop the rest:
    /// there is nowhere left to report them.
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

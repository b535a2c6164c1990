import CFstrm
import Glibc
import HTTPDNSCore
import Synchronization

/// Streams the query log's entries as dnstap (`DnstapFrame`) to a Frame Streams collector
/// listening on a Unix socket (`fstrm_capture`, Unbound's and Knot's dnstap collectors, ...).
/// libfstrm's I/O thread connects, reconnects every `reopenInterval` seconds while the
/// collector is away, writes and frees the frames; `tap` only hands frames to its queue and
/// drops (and counts) those that do not fit, so a slow or absent collector never holds up the
/// query log. Every libfstrm result goes through `check`.
public final class DnstapWriter: QueryLogTap, @unchecked Sendable {
    /// Only touched by `tap` (on the query log's queue: the single producer libfstrm's queue
    /// expects) and `close`.
    private var iothr: OpaquePointer?
    private let input: OpaquePointer
    private let identity: [UInt8]
    private let version: [UInt8]
    private let sentCounter = Atomic<Int>(0)
    private let droppedCounter = Atomic<Int>(0)
    public let socketPath: String

    /// dnstap's Frame Streams content type.
    static let contentType = "protobuf:dnstap.Dnstap"
    /// Frames queued at most (libfstrm's maximum): about a second of a busy service's lookups.
    static let queueSize: UInt32 = 16_384
    static let reopenInterval: UInt32 = 1

    /// Starts the I/O thread writing to `socketPath`; the collector need not be listening yet.
    public init(socketPath: String, identity: String, version: String) throws(DnstapError) {
        self.socketPath = socketPath
        self.identity = Array(identity.utf8)
        self.version = Array(version.utf8)
        var unixOptions = fstrm_unix_writer_options_init()
        var writerOptions = fstrm_writer_options_init()
        var threadOptions = fstrm_iothr_options_init()
        defer {
            fstrm_unix_writer_options_destroy(&unixOptions)
            fstrm_writer_options_destroy(&writerOptions)
            fstrm_iothr_options_destroy(&threadOptions)
        }
        fstrm_unix_writer_options_set_socket_path(unixOptions, socketPath)
        try Self.check(
            Self.contentType.withCString { fstrm_writer_options_add_content_type(writerOptions, $0, strlen($0)) },
            "fstrm_writer_options_add_content_type")
        try Self.check(fstrm_iothr_options_set_input_queue_size(threadOptions, Self.queueSize), "fstrm_iothr_options_set_input_queue_size")
        try Self.check(
            fstrm_iothr_options_set_reopen_interval(threadOptions, Self.reopenInterval), "fstrm_iothr_options_set_reopen_interval")
        var writer = fstrm_unix_writer_init(unixOptions, writerOptions)
        guard writer != nil else { throw DnstapError("fstrm_unix_writer_init failed for '\(socketPath)'") }
        // The I/O thread owns the writer from here (it destroys it), or, on failure, we do.
        guard let thread = fstrm_iothr_init(threadOptions, &writer) else {
            fstrm_writer_destroy(&writer)
            throw DnstapError("fstrm_iothr_init failed for '\(socketPath)'")
        }
        guard let input = fstrm_iothr_get_input_queue(thread) else {
            var thread: OpaquePointer? = thread
            fstrm_iothr_destroy(&thread)
            throw DnstapError("fstrm_iothr_get_input_queue failed")
        }
        iothr = thread
        self.input = input
    }

    deinit { close() }

    /// Frames handed to libfstrm, and frames dropped because its queue was full.
    public var sent: Int { sentCounter.load(ordering: .relaxed) }
    public var dropped: Int { droppedCounter.load(ordering: .relaxed) }

    public func tap(_ entries: [QueryLogEntry]) {
        guard let iothr else { return }
        for entry in entries {
            for frame in DnstapFrame.frames(entry, identity: identity, version: version) {
                guard let buffer = malloc(frame.count) else {
                    droppedCounter.add(1, ordering: .relaxed)
                    continue
                }
                frame.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: frame.count) }
                // On success libfstrm frees the buffer once written; otherwise it stays ours.
                if fstrm_iothr_submit(iothr, input, buffer, frame.count, fstrm_free_wrapper, nil) == fstrm_res_success {
                    sentCounter.add(1, ordering: .relaxed)
                } else {
                    free(buffer)
                    droppedCounter.add(1, ordering: .relaxed)
                }
            }
        }
    }

    /// Writes what is queued (libfstrm flushes on destroy) and stops the I/O thread. Idempotent;
    /// call it after the query log's last `tap`.
    public func close() {
        guard iothr != nil else { return }
        fstrm_iothr_destroy(&iothr)
    }

    private static func check(_ result: fstrm_res, _ call: String) throws(DnstapError) {
        guard result == fstrm_res_success else { throw DnstapError("\(call) failed (\(result.rawValue))") }
    }
}

/// A dnstap stream that could not be set up.
public struct DnstapError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

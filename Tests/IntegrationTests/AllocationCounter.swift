import Foundation
import HTTPDNSTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The heap allocations of a running httpdnsd, counted by `scripts/test/alloc_counter.c`: the
/// library is compiled (`cc -shared -fPIC`) into a directory of this test's and preloaded into
/// the binary (`environment`); it keeps its counts in a file mapped shared, which this reads
/// with `pread` while the process runs (the offsets are those of the C file's `struct shared`).
final class AllocationCounter: Sendable {
    /// The compiled library.
    let library: String
    /// The counter file the library maps.
    let file: String

    private enum Offset {
        static let magic = 0, pid = 8, allocations = 16, recording = 32, lost = 36, threads = 40
        static let sites = threads + threadSlots * threadSize
        static let threadSlots = 256, threadSize = 16
        static let siteSlots = 2048, siteSize = 144, siteFrames = 32, maxFrames = 14
        static let end = sites + siteSlots * siteSize
    }

    private static let magic: UInt64 = 0x3143_4f4c_4c41

    private init(library: String, file: String) {
        self.library = library
        self.file = file
    }

    /// Compiles the library with the C compiler `make test-deps` installs.
    static func build() throws -> AllocationCounter {
        let directory = try TestPaths.makeTemporaryDirectory("alloc-counter")
        let source = TestPaths.packageRoot.appendingPathComponent("scripts/test/alloc_counter.c").path
        let library = directory.appendingPathComponent("alloc_counter.so").path
        let compiled = try CommandRun.run(
            try TestPaths.executable("cc"), ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", library, source])
        guard compiled.status == 0 else { throw HarnessError("cc alloc_counter.c failed: \(compiled.text)") }
        return AllocationCounter(library: library, file: directory.appendingPathComponent("counts").path)
    }

    /// What httpdnsd's environment needs for the library to count its allocations.
    var environment: [String: String] { ["LD_PRELOAD": library, "HTTPDNS_ALLOC_COUNTER": file] }

    /// The counts at one moment.
    struct Counts: Sendable {
        /// Every allocation of the process so far.
        var allocations: UInt64
        /// Allocations so far by thread id.
        var threads: [Int32: UInt64]
        /// Allocations that were counted but whose call stack was not recorded.
        var lost: UInt32

        /// The allocations made between `earlier` and these, by thread id (threads that made none left out).
        func threads(since earlier: Counts) -> [Int32: UInt64] {
            threads.reduce(into: [:]) { result, entry in
                let made = entry.value - (earlier.threads[entry.key] ?? 0)
                if made > 0 { result[entry.key] = made }
            }
        }
    }

    /// One call stack the library recorded in a window, with how many allocations it made.
    struct Site: Sendable {
        var count: UInt64
        var thread: Int32
        /// Return addresses, innermost first (the allocating function's caller first).
        var frames: [UInt64]
    }

    /// Reads the counts; throws unless the file is the library's, written by process `pid`.
    func counts(of pid: Int32) throws -> Counts {
        let bytes = try read(count: Offset.sites)
        guard word(bytes, Offset.magic) == Self.magic, word(bytes, Offset.pid) == UInt64(pid) else {
            throw HarnessError("the allocation counter of process \(pid) is not running (was \(library) preloaded?)")
        }
        var threads: [Int32: UInt64] = [:]
        for slot in 0..<Offset.threadSlots {
            let base = Offset.threads + slot * Offset.threadSize
            let tid = Int32(truncatingIfNeeded: word32(bytes, base))
            if tid != 0 { threads[tid] = word(bytes, base + 8) }
        }
        return Counts(allocations: word(bytes, Offset.allocations), threads: threads, lost: word32(bytes, Offset.lost))
    }

    /// Starts recording the call stack of every allocation under `window` (1 and up), or stops (0).
    func record(window: UInt32) throws {
        var value = window.littleEndian
        let fd = open(file, O_WRONLY)
        guard fd >= 0 else { throw HarnessError("open \(file): errno \(errno)") }
        defer { close(fd) }
        guard pwrite(fd, &value, 4, off_t(Offset.recording)) == 4 else { throw HarnessError("pwrite \(file): errno \(errno)") }
    }

    /// The call stacks recorded under `window`.
    func sites(window: UInt32) throws -> [Site] {
        let bytes = try read(count: Offset.end)
        var sites: [Site] = []
        for slot in 0..<Offset.siteSlots {
            let base = Offset.sites + slot * Offset.siteSize
            guard word(bytes, base) != 0, word32(bytes, base + 16) == window else { continue }
            let frames = min(Int(word32(bytes, base + 24)), Offset.maxFrames)
            sites.append(
                Site(
                    count: word(bytes, base + 8), thread: Int32(truncatingIfNeeded: word32(bytes, base + 20)),
                    frames: (0..<frames).map { word(bytes, base + Offset.siteFrames + 8 * $0) }))
        }
        return sites.sorted { $0.count > $1.count }
    }

    private func read(count: Int) throws -> [UInt8] {
        let fd = open(file, O_RDONLY)
        guard fd >= 0 else { throw HarnessError("open \(file): errno \(errno)") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        guard got == count else { throw HarnessError("pread \(file): \(got) of \(count) bytes") }
        return bytes
    }

    private func word(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    private func word32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}

import Foundation
import HTTPDNSTestSupport

/// Names the code behind the call stacks `AllocationCounter` recorded in a running process:
/// each return address is placed in the file mapped there (`/proc/PID/maps`), and a stack is
/// owned by the first library or program on it that is not the C library (whose `strdup`,
/// `fopen` ... allocate for their callers) or the counter itself.
struct AllocationSites {
    private struct Mapping {
        var start: UInt64, end: UInt64, offset: UInt64
        var path: String
    }

    private let mappings: [Mapping]
    private let pid: Int32

    /// The executable mappings of process `pid` now.
    init(pid: Int32) throws {
        self.pid = pid
        let text = try Self.contents("/proc/\(pid)/maps")
        mappings = text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1].contains("x") else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
                let offset = UInt64(fields[2], radix: 16)
            else { return nil }
            return Mapping(start: start, end: end, offset: offset, path: fields[5...].joined(separator: " "))
        }
    }

    /// All of a file (procfs files say they are empty, so read until the end).
    private static func contents(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw HarnessError("cannot read \(path)") }
        defer { try? handle.close() }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// The file (base name) an address lies in, and its offset in that file.
    func place(_ address: UInt64) -> (module: String, offset: UInt64)? {
        guard let mapping = mappings.first(where: { $0.start <= address && address < $0.end }) else { return nil }
        return ((mapping.path as NSString).lastPathComponent, address - mapping.start + mapping.offset)
    }

    /// The library or program that asked for the allocation of `site`.
    func owner(_ site: AllocationCounter.Site) -> String {
        for frame in site.frames {
            guard let module = place(frame)?.module else { return "?" }
            if module.hasPrefix("libc.so") || module.hasPrefix("ld-linux") || module.hasPrefix("alloc_counter") { continue }
            return module
        }
        return "?"
    }

    /// Whether the process runs a debug build (SwiftPM links `libswiftSwiftOnoneSupport` into
    /// unoptimised builds only).
    var isDebugBuild: Bool { mappings.contains { $0.path.hasSuffix("/libswiftSwiftOnoneSupport.so") } }

    /// The name of thread `tid` (`/proc/PID/task/TID/comm`), or its id when it is gone.
    func threadName(_ tid: Int32) -> String {
        let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)
        return name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "thread \(tid)"
    }

    /// `sites` as text, most allocations first: count, thread, owner, and each frame as
    /// `module+0xoffset` with its function where `addr2line` (binutils, beside `cc`) names it.
    func describe(_ sites: [AllocationCounter.Site], limit: Int = 16) -> String {
        let shown = Array(sites.prefix(limit))
        let functions = self.functions(Set(shown.flatMap(\.frames)))
        return shown.map { site in
            let frames = site.frames.map { frame -> String in
                guard let (module, offset) = place(frame) else { return String(format: "0x%llx", frame) }
                return "\(module)+0x\(String(offset, radix: 16))" + (functions[frame].map { " \($0)" } ?? "")
            }
            return "\(site.count) on \(threadName(site.thread)) by \(owner(site)):\n    " + frames.joined(separator: "\n    ")
        }.joined(separator: "\n")
    }

    /// The functions of `addresses` that `addr2line` names (one run per file), Swift's demangled
    /// by `swift demangle --simplified` (one run).
    private func functions(_ addresses: Set<UInt64>) -> [UInt64: String] {
        guard let addr2line = try? TestPaths.executable("addr2line") else { return [:] }
        var byFile: [String: [(address: UInt64, offset: UInt64)]] = [:]
        for address in addresses {
            guard let mapping = mappings.first(where: { $0.start <= address && address < $0.end }) else { continue }
            byFile[mapping.path, default: []].append((address, address - mapping.start + mapping.offset))
        }
        var names: [UInt64: String] = [:]
        for (path, frames) in byFile {
            // A return address is one past its call: look up the byte before it.
            guard
                let run = try? CommandRun.run(
                    addr2line, ["-f", "-e", path] + frames.map { "0x" + String($0.offset - 1, radix: 16) }, mergingStandardError: false),
                run.status == 0
            else { continue }
            let lines = run.text.split(separator: "\n", omittingEmptySubsequences: false)
            for (index, frame) in frames.enumerated() where 2 * index < lines.count && lines[2 * index] != "??" {
                names[frame.address] = String(lines[2 * index])
            }
        }
        let mangled = names.filter { $0.value.hasPrefix("$s") }
        guard !mangled.isEmpty, let swift = try? TestPaths.executable("swift") else { return names }
        let order = Array(mangled.keys)
        guard
            let run = try? CommandRun.run(
                swift, ["demangle", "--simplified", "--compact"] + order.map { mangled[$0]! }, mergingStandardError: false),
            run.status == 0
        else { return names }
        for (address, name) in zip(order, run.text.split(separator: "\n")) { names[address] = String(name) }
        return names
    }
}

import Foundation
import HTTPDNSCore
import HTTPDNSServer

/// `httpdns_build_info` and the standard `process_*` metrics of this process, read from
/// `getrusage`, `getrlimit` and `/proc` at scrape time. A value that cannot be read is left out
/// (and logged once), never shown as 0.
enum ProcessMetrics {
    /// The release this binary is: what `--version` prints (`BuildInfo`).
    static let version = BuildInfo.version
    /// The git revision it was built from (`BuildInfo.revision`).
    static let revision = BuildInfo.revision
    /// The Swift compiler it was built with (major.minor).
    static let swift = BuildInfo.swift

    static let buildInfo = MetricDescriptor(
        "httpdns_build_info", .gauge, help: "Always 1: the version, git revision and Swift compiler of this build.",
        labels: ["version", "revision", "swift"])
    static let cpuSeconds = MetricDescriptor("process_cpu_seconds_total", .counter, help: "User and system CPU time spent, in seconds.")
    static let residentMemory = MetricDescriptor("process_resident_memory_bytes", .gauge, help: "Resident memory size in bytes.")
    static let virtualMemory = MetricDescriptor("process_virtual_memory_bytes", .gauge, help: "Virtual memory size in bytes.")
    static let openFDs = MetricDescriptor("process_open_fds", .gauge, help: "Open file descriptors.")
    static let maxFDs = MetricDescriptor("process_max_fds", .gauge, help: "The soft limit of open file descriptors.")
    static let startTimeSeconds = MetricDescriptor(
        "process_start_time_seconds", .gauge, help: "Start time of the process since the Unix epoch, in seconds.")

    static func emit(into out: inout MetricsEmitter) {
        out.sample(buildInfo, [version, revision, swift], 1)
        var usage = rusage()
        if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 {
            let seconds =
                Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
            out.sample(cpuSeconds, [], float: seconds)
        }
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = read("/proc/self/statm")?.split(separator: " "), statm.count >= 2,
            let virtual = Double(statm[0]), let resident = Double(statm[1]), page > 0
        {
            out.sample(residentMemory, [], float: resident * page)
            out.sample(virtualMemory, [], float: virtual * page)
        }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The listing's own descriptor is among them.
            out.sample(openFDs, [], float: Double(max(0, open.count - 1)))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            out.sample(maxFDs, [], float: limit.rlim_cur == rlim_t.max ? Double.infinity : Double(limit.rlim_cur))
        }
        if let start = startTime {
            out.sample(startTimeSeconds, [], float: start)
        }
    }

    /// Boot time (`btime` of /proc/stat) plus the process's start in clock ticks after boot
    /// (field 22 of /proc/self/stat). Read once: it does not change.
    static let startTime: Double? = {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard ticks > 0, let stat = read("/proc/self/stat"), let close = stat.lastIndex(of: ")"),
            let boot = read("/proc/stat")?.split(separator: "\n").first(where: { $0.hasPrefix("btime ") })
                .flatMap({ Double($0.dropFirst("btime ".count)) })
        else { return nil }
        // Fields after the command name start with field 3 (state): field 22 is the 20th of them.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let started = Double(fields[19]) else { return nil }
        return boot + started / ticks
    }()

    private static func read(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}

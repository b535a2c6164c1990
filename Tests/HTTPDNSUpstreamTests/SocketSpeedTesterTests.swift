import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSUpstream

#if canImport(Glibc)
    import Glibc
#endif

/// The socket speed test against real loopback listeners: accepting, refusing and black holes.
@Suite struct SocketSpeedTesterTests {
    /// Set in the child process that runs inside a private network namespace.
    static let namespaceVariable = "HTTPDNS_SPEEDTEST_IN_NETNS"
    static let insideNamespace = ProcessInfo.processInfo.environment[namespaceVariable] == "1"

    private func probe(_ tester: SocketSpeedTester, _ addresses: [String], port: Int, timeout: Double) async -> [String: ProbeResult] {
        await withCheckedContinuation { continuation in
            tester.probe(addresses, port: port, timeout: timeout) { continuation.resume(returning: $0) }
        }
    }

    private func isReachable(_ result: ProbeResult?) -> Bool {
        if case .reachable = result { return true }
        return false
    }

    @Test func acceptingListenerIsReachable() async throws {
        let listener = try LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress())
        defer { listener.stop() }
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        let results = await probe(tester, [listener.host], port: Int(listener.port), timeout: SocketSpeedTester.maximumTimeout)
        #expect(results.count == 1)
        guard case .reachable(let seconds)? = results[listener.host] else {
            Issue.record("expected reachable, got \(String(describing: results[listener.host]))")
            return
        }
        #expect(seconds >= 0 && seconds < SocketSpeedTester.maximumTimeout)
    }

    @Test func ipv6LoopbackListenerIsReachable() async throws {
        let listener = try LoopbackListener(.accepting, host: "::1")
        defer { listener.stop() }
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        let results = await probe(tester, ["::1"], port: Int(listener.port), timeout: SocketSpeedTester.maximumTimeout)
        #expect(isReachable(results["::1"]))
    }

    @Test func portWithoutListenerIsRefusedAsUnreachableLongBeforeTheTimeout() async throws {
        let port = deadPort()
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        // Timed where the prober thread completes, not where the awaiting task resumes.
        let started = MonotonicTime.now()
        let (results, elapsed) = await withCheckedContinuation { continuation in
            tester.probe(["127.0.0.1"], port: Int(port), timeout: SocketSpeedTester.maximumTimeout) {
                continuation.resume(returning: ($0, MonotonicTime.now() - started))
            }
        }
        #expect(results == ["127.0.0.1": .unreachable])
        // A refusal answers at once; only the timeout would take the 60 s.
        #expect(elapsed < 30, "the refused probe took \(elapsed) s: it waited for its timeout")
    }

    @Test func blackHoleIsUnreachableAfterTheTimeout() async throws {
        let hole = try LoopbackListener(.blackHole, host: LoopbackListener.randomLoopbackAddress())
        defer { hole.stop() }
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        let results = await probe(tester, [hole.host], port: Int(hole.port), timeout: 0.3)
        #expect(results == [hole.host: .unreachable])
    }

    @Test func addressesOfOneCallAreProbedInParallel() async throws {
        let holes = try LoopbackListener.group(.blackHole, count: 4)
        defer { holes.forEach { $0.stop() } }
        let port = holes[0].port
        let hosts = Set(holes.map(\.host))
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        // Each black hole drops the SYNs: a probe stays in SYN_SENT for its whole 60 s timeout.
        // In parallel, all four are in flight at once; one after the other, never more than one.
        // The probe is handed to the prober thread here, before the wait, not from a child task
        // that a busy cooperative pool may start only after the wait gave up.
        let results = Mutex<[String: ProbeResult]?>(nil)
        tester.probe(holes.map(\.host), port: Int(port), timeout: SocketSpeedTester.maximumTimeout) { found in
            results.withLock { $0 = found }
        }
        var lastSeen: [TCPSocketTable.Entry] = []
        let allInFlight = await TCPSocketTable.wait { table in
            let synSent = table.filter { $0.remotePort == port && $0.state == .synSent }
            lastSeen = table.filter { $0.remotePort == port }
            return hosts.isSubset(of: synSent.map(\.remoteHost))
        }
        #expect(
            allInFlight,
            "the four probes were never in flight at the same time: last seen \(lastSeen), results \(String(describing: results.withLock { $0 }))"
        )
        // Shutting down decides the undecided probes (unreachable) instead of waiting a minute;
        // it returns once the prober thread has completed them.
        tester.shutdown()
        #expect(results.withLock { $0 } == Dictionary(uniqueKeysWithValues: holes.map { ($0.host, ProbeResult.unreachable) }))
    }

    @Test func mixedAnswerGetsOneResultPerDistinctAddress() async throws {
        let open = try LoopbackListener.group(.accepting, count: 2)
        defer { open.forEach { $0.stop() } }
        let port = open[0].port
        let hole = try LoopbackListener(.blackHole, host: LoopbackListener.randomLoopbackAddress(), port: port)
        defer { hole.stop() }
        var refused = LoopbackListener.randomLoopbackAddress()
        while open.map(\.host).contains(refused) || refused == hole.host { refused = LoopbackListener.randomLoopbackAddress() }
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }

        let addresses = [hole.host, open[0].host, refused, open[1].host, open[0].host, "not-an-address", "[::1]"]
        let results = await probe(tester, addresses, port: Int(port), timeout: 0.5)
        #expect(Set(results.keys) == Set(addresses))
        #expect(isReachable(results[open[0].host]))
        #expect(isReachable(results[open[1].host]))
        #expect(results[hole.host] == .unreachable)
        #expect(results[refused] == .unreachable)
        #expect(results["not-an-address"] == .unreachable)
        #expect(results["[::1]"] == .unreachable)
    }

    @Test func addressesBeyondTheConcurrencyLimitWaitForASlot() async throws {
        let open = try LoopbackListener.group(.accepting, count: 5)
        defer { open.forEach { $0.stop() } }
        let tester = SocketSpeedTester(maxConcurrentProbes: 2)
        defer { tester.shutdown() }
        let results = await probe(tester, open.map(\.host), port: Int(open[0].port), timeout: SocketSpeedTester.maximumTimeout)
        #expect(results.count == 5)
        #expect(results.values.allSatisfy(isReachable))
    }

    @Test func concurrentCallsEachCompleteWithTheirOwnAddresses() async throws {
        let open = try LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress())
        defer { open.stop() }
        let hole = try LoopbackListener(.blackHole, host: LoopbackListener.randomLoopbackAddress(), port: open.port)
        defer { hole.stop() }
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        async let first = probe(tester, [hole.host], port: Int(open.port), timeout: 0.5)
        async let second = probe(tester, [open.host], port: Int(open.port), timeout: SocketSpeedTester.maximumTimeout)
        let (slow, fast) = await (first, second)
        #expect(slow == [hole.host: .unreachable])
        #expect(fast.count == 1)
        #expect(isReachable(fast[open.host]))
    }

    @Test func emptyCallCompletesWithNoResults() async {
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        #expect(await probe(tester, [], port: 443, timeout: 1).isEmpty)
    }

    @Test func callAfterShutdownCompletesWithEveryAddressUnreachable() async {
        let tester = SocketSpeedTester()
        tester.shutdown()
        tester.shutdown()
        let results = await probe(tester, ["127.0.0.1", "::1", "127.0.0.1"], port: 80, timeout: 1)
        #expect(results == ["127.0.0.1": .unreachable, "::1": .unreachable])
    }

    @Test func icmpIsUsedExactlyWhenPingGroupRangeAllowsThisProcess() throws {
        let range = try String(contentsOfFile: "/proc/sys/net/ipv4/ping_group_range", encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).compactMap { UInt32($0) }
        try #require(range.count == 2)
        var groups = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
        let count = getgroups(Int32(groups.count), &groups)
        let mine = [getegid()] + groups.prefix(Int(max(0, count)))
        let allowed = mine.contains { range[0] <= $0 && $0 <= range[1] }

        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        #expect(tester.usesICMPForIPv4 == allowed)
        #expect(tester.usesICMPForIPv6 == allowed)
        let disabled = SocketSpeedTester(allowICMP: false)
        defer { disabled.shutdown() }
        #expect(!disabled.usesICMPForIPv4 && !disabled.usesICMPForIPv6)
    }

    @Test func portZeroWithoutICMPConnectsToTCP443() async throws {
        let tester = SocketSpeedTester(allowICMP: false)
        defer { tester.shutdown() }
        let silent = LoopbackListener.randomLoopbackAddress()
        // Binding 443 needs privilege; where the test has it, the fallback must find the listener.
        let listener = try? LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress(), port: 443)
        defer { listener?.stop() }
        let addresses = [silent] + (listener.map { [$0.host] } ?? [])
        let results = await probe(tester, addresses, port: 0, timeout: SocketSpeedTester.maximumTimeout)
        #expect(results[silent] == .unreachable)
        if let listener {
            #expect(isReachable(results[listener.host]))
        }
    }

    @Test func portZeroOnThisMachineFallsBackWhenICMPIsRefused() async throws {
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        try #require(!tester.usesICMPForIPv4, "this machine allows ICMP sockets; the fallback is covered by the allowICMP:false test")
        let silent = LoopbackListener.randomLoopbackAddress()
        let listener = try? LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress(), port: 443)
        defer { listener?.stop() }
        let results = await probe(tester, [silent] + (listener.map { [$0.host] } ?? []), port: 0, timeout: SocketSpeedTester.maximumTimeout)
        #expect(results[silent] == .unreachable)
        if let listener {
            #expect(isReachable(results[listener.host]))
        }
    }

    // MARK: ICMP echo, inside a private user + network namespace where ping sockets are allowed

    /// True when `unshare -rn` can make a private user and network namespace here.
    static let canUnshare: Bool = {
        guard !insideNamespace else { return false }
        return (try? runUnshare(["/bin/true"]).status) == 0
    }()

    private static func runUnshare(_ command: [String]) throws -> (status: Int32, output: String) {
        let run = try CommandRun.run("/usr/bin/unshare", ["-rn"] + command)
        return (run.status, run.text)
    }

    /// ``runUnshare(_:environment:)`` without blocking a thread of the cooperative pool while the
    /// child runs (a whole test binary starting up takes seconds on a loaded machine, and every
    /// other test of the process needs those threads): output goes to a file, and the exit is
    /// awaited through `terminationHandler`.
    private static func runUnshareAsync(_ command: [String], environment: [String: String]) async throws -> (status: Int32, output: String)
    {
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("unshare-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-rn"] + command
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return (status, text)
    }

    /// Runs ``icmpEchoReachesLoopbackInsideTheNamespace()`` in a child of this test binary inside a
    /// fresh network namespace (only its own `lo`, so no packet can leave the machine) whose
    /// `ping_group_range` admits group 0, which `unshare -r` maps the caller's group to.
    @Test(.enabled(if: SocketSpeedTesterTests.canUnshare, "unshare -rn is not permitted here"))
    func icmpEchoWorksWhereTheKernelAllowsIt() async throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let script = """
            echo "0 0" > /proc/sys/net/ipv4/ping_group_range || exit 90
            ip link set lo up || exit 91
            exec "$0" --testing-library swift-testing --filter icmpEchoReachesLoopbackInsideTheNamespace
            """
        let (status, output) = try await Self.runUnshareAsync(
            ["/bin/sh", "-c", script, binary], environment: [Self.namespaceVariable: "1"])
        #expect(status == 0, "child output:\n\(output)")
        #expect(output.contains("icmpEchoReachesLoopbackInsideTheNamespace() passed"), "child output:\n\(output)")
    }

    @Test(.enabled(if: SocketSpeedTesterTests.insideNamespace, "runs only in the namespace child"))
    func icmpEchoReachesLoopbackInsideTheNamespace() async throws {
        let tester = SocketSpeedTester()
        defer { tester.shutdown() }
        try #require(tester.usesICMPForIPv4)
        #expect(tester.usesICMPForIPv6)
        // Nothing listens on 443 in the fresh namespace: a TCP fallback would be unreachable.
        let addresses = ["127.0.0.1", LoopbackListener.randomLoopbackAddress(), "::1"]
        let results = await probe(tester, addresses, port: 0, timeout: SocketSpeedTester.maximumTimeout)
        for address in addresses {
            #expect(isReachable(results[address]), "\(address): \(String(describing: results[address]))")
        }
        let tcp = await probe(tester, addresses, port: 443, timeout: 2)
        #expect(tcp.values.allSatisfy { $0 == .unreachable })
    }
}

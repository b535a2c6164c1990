import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

/// Set once; read from another task.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// SIGKILL at a random moment (once the first preload reply of the run is in, so that each run
/// has acknowledged something) while preloads and resolves are in flight, several times over one
/// database: after each kill the file passes `PRAGMA integrity_check` and every name a preload
/// reply called durable is in the cache of the next run.
///
/// `make test` runs the short form (3 cycles, kills within 150 ms of the first reply);
/// `make soak` the long one through the environment: `HTTPDNS_CRASH_CYCLES` cycles, each killed
/// at a random moment up to `HTTPDNS_CRASH_MAX_KILL_MS` after its first reply while the load
/// goes on. The test prints one summary line (cycles, names acknowledged, names lost).
@Suite("Crash loop")
struct CrashLoopTests {
    static let cycles = setting("HTTPDNS_CRASH_CYCLES", default: 3, range: 1...100_000)
    static let maxKillMilliseconds = setting("HTTPDNS_CRASH_MAX_KILL_MS", default: 150, range: 0...600_000)
    /// Preload batches (25 names each) one worker sends per cycle at most; three workers.
    static let batchesPerWorker = 40

    private static func setting(_ name: String, default value: Int, range: ClosedRange<Int>) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name] else { return value }
        guard let number = Int(text), range.contains(number) else {
            fatalError("\(name)=\(text): expected a whole number in \(range)")
        }
        return number
    }

    private static func integrityCheck(_ path: String) throws -> String {
        try CommandRun.run(
            "python3",
            ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", path],
            mergingStandardError: false
        ).text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every host in the account's cache (any family, expired included), walked page by page
    /// before any load starts (so each entry is listed once).
    private static func cachedHosts(_ service: HTTPDNSDProcess) async throws -> Set<String> {
        var hosts = Set<String>()
        var cursor: String?
        repeat {
            let page = try await service.client.get(
                "/v1/default/cache?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? ""))
            guard page.status == 200 else { throw HarnessError("listing the cache: \(page)") }
            for entry in page.json["entries"]?.array ?? [] {
                if let host = entry["host"]?.string { hosts.insert(host) }
            }
            cursor = page.json["next_cursor"]?.string
        } while cursor != nil
        return hosts
    }

    @Test func nothingAcknowledgedIsLostToSIGKILLsAtRandomMoments() async throws {
        let cycles = Self.cycles
        try await withTestServers { servers in
            var database: String?
            var acknowledged: [String] = []
            var lost: [String] = []
            var damaged = 0
            for cycle in 0...cycles {
                var options = servers.options()
                options.databasePath = database
                options.config = ["accounts": ["default": loopbackAccount(servers, ["cacheCountLimit": 1_000_000])]]
                let acked = acknowledged
                let (path, newlyAcknowledged, missing) = try await withHTTPDNSD(options) { service -> (String, [String], [String]) in
                    let cached = try await Self.cachedHosts(service)
                    let missing = acked.filter { !cached.contains($0) }
                    guard cycle < cycles else { return (service.databasePath, [], missing) }
                    let killAfter = Int.random(in: 0...Self.maxKillMilliseconds)
                    let firstReply = Flag()
                    let killed = Flag()
                    let durable = await withTaskGroup(of: [String].self) { group -> [String] in
                        for worker in 0..<3 {
                            group.addTask {
                                var hosts: [String] = []
                                for batch in 0..<Self.batchesPerWorker where !killed.isSet {
                                    let names = (0..<25).map { _ in TestZone.unique("c\(cycle)w\(worker)b\(batch)") }
                                    guard
                                        let reply = try? await service.client.post(
                                            "/v1/default/preload", json: ["hosts": .array(names.map { .string($0) }), "type": "A"]),
                                        reply.status == 200, reply.json["durable"]?.bool == true
                                    else { continue }
                                    firstReply.set()
                                    hosts += names
                                }
                                return hosts
                            }
                        }
                        group.addTask {
                            var index = 0
                            while !killed.isSet {
                                _ = try? await service.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index % 200))&type=A")
                                index += 1
                            }
                            return []
                        }
                        group.addTask {
                            // A deadline for a machine so loaded that nothing is answered: kill anyway.
                            let deadline = Date().addingTimeInterval(30)
                            while !firstReply.isSet, Date() < deadline {
                                try? await Task.sleep(for: .milliseconds(5))
                            }
                            try? await Task.sleep(for: .milliseconds(killAfter))
                            await service.kill()
                            killed.set()
                            return []
                        }
                        var all: [String] = []
                        for await hosts in group { all += hosts }
                        return all
                    }
                    #expect(service.exitedBySignal, "cycle \(cycle): the service had exited before the kill")
                    return (service.databasePath, durable, missing)
                }
                database = path
                lost += missing
                #expect(missing.isEmpty, "cycle \(cycle): \(missing.count) acknowledged names lost, e.g. \(missing.prefix(3))")
                acknowledged += newlyAcknowledged
                let integrity = try Self.integrityCheck(path)
                if integrity != "ok" { damaged += 1 }
                #expect(integrity == "ok", "cycle \(cycle)")
            }
            print(
                "crash loop: \(cycles) SIGKILL cycles (kill up to \(Self.maxKillMilliseconds) ms after the first reply), \(acknowledged.count) names acknowledged durable, \(lost.count) lost, integrity_check failed after \(damaged)"
            )
            #expect(acknowledged.count >= 25 * cycles, "each run acknowledged at least one preload")
        }
    }
}

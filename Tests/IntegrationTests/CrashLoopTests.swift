import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

/// Set once a reply has arrived; read from another task.
private final class ReplyFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// SIGKILL at a random moment (once the first preload reply of the run is in, so that each run
/// has acknowledged something) while preloads and resolves are in flight, several times over one
/// database: after each kill the file passes `PRAGMA integrity_check` and every name a preload
/// reply called durable is in the cache of the next run. (The short form; three cycles.)
@Suite("Crash loop")
struct CrashLoopTests {
    static let cycles = 3

    private static func integrityCheck(_ path: String) throws -> String {
        try CommandRun.run(
            "python3", ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])", path],
            mergingStandardError: false
        ).text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func nothingAcknowledgedIsLostToSIGKILLsAtRandomMoments() async throws {
        try await withTestServers { servers in
            var database: String?
            var acknowledged: [String] = []
            for cycle in 0...Self.cycles {
                var options = servers.options()
                options.databasePath = database
                let acked = acknowledged
                let (path, newlyAcknowledged) = try await withHTTPDNSD(options) { service -> (String, [String]) in
                    for host in acked {
                        let cached = try await service.client.get("/v1/default/cache?host=\(host)&type=A&expired=1")
                        #expect(cached.status == 200, "cycle \(cycle): acknowledged \(host) was lost: \(cached)")
                    }
                    guard cycle < Self.cycles else { return (service.databasePath, []) }
                    let batches = (0..<6).map { batch in (0..<25).map { _ in TestZone.unique("c\(cycle)b\(batch)") } }
                    let killAfter = Int.random(in: 0...150)
                    let firstReply = ReplyFlag()
                    let durable = await withTaskGroup(of: [String].self) { group -> [String] in
                        for hosts in batches {
                            group.addTask {
                                guard let reply = try? await service.client.post(
                                    "/v1/default/preload", json: ["hosts": .array(hosts.map { .string($0) }), "type": "A"]),
                                    reply.status == 200, reply.json["durable"]?.bool == true
                                else { return [] }
                                firstReply.set()
                                return hosts
                            }
                        }
                        group.addTask {
                            for index in 0..<50 {
                                _ = try? await service.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index))&type=A")
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
                            return []
                        }
                        var all: [String] = []
                        for await hosts in group { all += hosts }
                        return all
                    }
                    #expect(service.exitedBySignal)
                    return (service.databasePath, durable)
                }
                database = path
                acknowledged += newlyAcknowledged
                #expect(try Self.integrityCheck(path) == "ok", "cycle \(cycle)")
            }
            #expect(acknowledged.count >= 25 * Self.cycles, "each run acknowledged at least one preload")
        }
    }
}

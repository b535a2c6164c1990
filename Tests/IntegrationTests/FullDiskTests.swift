import Foundation
import HTTPDNSTestSupport
import Testing

/// A small tmpfs mounted for one test (needs root and a kernel that lets this process mount).
struct SmallDisk {
    let directory: URL

    /// True when `mount -t tmpfs` works here; probed once by mounting and unmounting 64 KiB.
    static let canMount: Bool = {
        guard let probe = try? SmallDisk(kilobytes: 64) else { return false }
        probe.unmount()
        return true
    }()

    init(kilobytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("httpdnsd-small-disk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", directory.path]) == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw HarnessError("mount -t tmpfs failed on \(directory.path)")
        }
    }

    var databasePath: String { directory.appendingPathComponent("httpdnsd.sqlite").path }
    private var fillerPath: String { directory.appendingPathComponent("filler").path }

    /// Writes a file that takes every byte left (until ENOSPC).
    func fill() throws {
        guard FileManager.default.createFile(atPath: fillerPath, contents: nil) else {
            throw HarnessError("cannot create \(fillerPath)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: fillerPath))
        defer { try? handle.close() }
        let chunk = Data(repeating: 0x55, count: 4096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
    }

    /// Gives the space back.
    func free() throws { try FileManager.default.removeItem(atPath: fillerPath) }

    func unmount() {
        _ = Self.run("/bin/umount", [directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The database on a real full disk (a small tmpfs): a preload says it is not durable and is
/// answered from memory, `/readyz` and `/metrics` show the store degraded, the store recovers by
/// itself when space returns, and after a SIGKILL every name a reply called durable is there.
@Suite("Full disk", .serialized)
struct FullDiskTests {
    @Test(.enabled(if: SmallDisk.canMount, "skipped: this sandbox does not allow mount -t tmpfs (needs root)"))
    func aFullDiskIsReportedThenRecoversAndNothingAcknowledgedIsLostToASIGKILL() async throws {
        let disk = try SmallDisk(kilobytes: 2048)
        defer { disk.unmount() }
        let firstBatch = (0..<1500).map { _ in TestZone.unique("full") }
        let secondBatch = (0..<50).map { _ in TestZone.unique("after") }

        try await withTestServers { servers in
            var options = servers.options()
            options.databasePath = disk.databasePath
            try await withHTTPDNSD(options) { service in
                try disk.fill()
                let preload = try await service.client.post(
                    "/v1/default/preload", json: ["hosts": .array(firstBatch.map { .string($0) }), "type": "A"])
                #expect(preload.status == 200)
                #expect(preload.json["durable"]?.bool == false, "\(preload.text.prefix(300))")
                #expect(preload.json["store_error"]?.string?.contains("full") == true)
                #expect(preload.json["resolved"]?.int == firstBatch.count)
                let results = preload.json["results"]?.array ?? []
                #expect(results.allSatisfy { $0["persisted"]?.bool == false })
                #expect(results.first?["ips"]?.strings == TestZone.wildV4)  // answered from memory

                let degraded = try await service.client.get("/readyz")
                #expect(degraded.status == 200)
                #expect(degraded.json["status"]?.string == "degraded", "\(degraded)")
                #expect(degraded.json["store"]?["healthy"]?.bool == false)
                #expect((degraded.json["store"]?["pendingChanges"]?.int ?? 0) >= firstBatch.count)
                #expect(try await service.metrics().sum("httpdns_store_healthy") == 0)
                let hit = try await service.client.get("/v1/default/resolve?host=\(firstBatch[7])&type=A")
                #expect(hit.json["source"]?.string == "cache")

                try disk.free()
                let recovered = try await poll(for: 90, every: .milliseconds(200)) { () async throws -> Bool? in
                    let ready = try await service.client.get("/readyz")
                    return ready.json["store"]?["healthy"]?.bool == true ? true : nil
                }
                #expect(recovered == true, "the store did not recover after space came back: \(service.log().suffix(2000))")
                #expect(try await service.metrics().sum("httpdns_store_healthy") == 1)
                #expect(service.log().contains("fail (full (SQLite result code 13))"))
                #expect(service.log().contains("succeed again"))

                let second = try await service.client.post(
                    "/v1/default/preload", json: ["hosts": .array(secondBatch.map { .string($0) }), "type": "A"])
                #expect(second.json["durable"]?.bool == true, "\(second.text.prefix(300))")
                #expect(second.json["results"]?.array?.allSatisfy { $0["persisted"]?.bool == true } == true)
                await service.kill()  // no graceful flush
                #expect(service.exitedBySignal)
            }
        }

        let options = HTTPDNSDOptions(
            upstreams: ["doh:http://127.0.0.1:\(deadPort())/dns-query"], localDNSServers: ["127.0.0.1:\(deadPort())"],
            localDNSFallback: false, databasePath: disk.databasePath)
        try await withHTTPDNSD(options) { restarted in
            // Both batches: the second was acknowledged durable; the first was committed on recovery.
            for host in secondBatch + firstBatch.prefix(50) {
                let response = try await restarted.client.get("/v1/default/resolve?host=\(host)&type=A")
                #expect(response.json["source"]?.string == "cache", "\(host): \(response)")
            }
        }
    }
}

/// Account writes on a real full disk: 503 `StoreUnavailable` with `Retry-After`, and nothing
/// changes (the account is not created, updated or deleted in memory either); once space is back
/// the same write succeeds.
@Suite("Full disk: account writes", .serialized)
struct FullDiskAccountWriteTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test(.enabled(if: SmallDisk.canMount, "skipped: this sandbox does not allow mount -t tmpfs (needs root)"))
    func anAccountWriteOnAFullDiskIs503StoreUnavailableAndChangesNothing() async throws {
        let disk = try SmallDisk(kilobytes: 2048)
        defer { disk.unmount() }
        try await withTestServers { servers in
            var options = servers.options()
            options.databasePath = disk.databasePath
            options.adminToken = Self.token
            try await withHTTPDNSD(options) { service in
                let before = try await service.client.get("/v1/accounts/default", headers: Self.bearer)
                #expect(before.status == 200)
                let account = loopbackAccount(servers, ["cacheCountLimit": 777])
                try LoopbackGuard.checkAccount(id: "tenant1", account)
                try disk.fill()

                for (method, path) in [
                    ("PUT", "/v1/accounts/tenant1"), ("PUT", "/v1/accounts/default"), ("DELETE", "/v1/accounts/default"),
                ] {
                    let refused =
                        method == "PUT"
                        ? try await service.client.put(path, json: account, headers: Self.bearer)
                        : try await service.client.delete(path, headers: Self.bearer)
                    expectError(refused, status: 503, code: "StoreUnavailable")
                    #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1, "\(method) \(path): \(refused)")
                    #expect(refused.text.contains("full"), "\(refused)")
                    #expect(!refused.text.contains(disk.directory.path), "no path in a reply")
                }
                #expect(try await service.client.get("/v1/accounts/tenant1", headers: Self.bearer).status == 404)
                #expect(try await service.client.get("/v1/tenant1/resolve?host=\(TestZone.www)").status == 404)
                let after = try await service.client.get("/v1/accounts/default", headers: Self.bearer)
                #expect(after.status == 200)
                #expect(after.text == before.text, "the default account is unchanged")

                try disk.free()
                let created = try await service.client.put("/v1/accounts/tenant1", json: account, headers: Self.bearer)
                #expect(created.status == 201, "\(created)")
                #expect(created.json["config"]?["cacheCountLimit"]?.int == 777)
            }
        }
    }
}

/// The write-behind queue stays within `storeMaxPendingChanges` while the disk is full: the rest
/// is dropped and counted, no preload is called durable until the account's cache is flushed,
/// and after that one is again.
@Suite("Full disk: bounded queue", .serialized)
struct FullDiskQueueBoundTests {
    @Test(.enabled(if: SmallDisk.canMount, "skipped: this sandbox does not allow mount -t tmpfs (needs root)"))
    func theQueueStaysBoundedOnAFullDiskAndNothingIsCalledDurableUntilTheCacheIsFlushed() async throws {
        let disk = try SmallDisk(kilobytes: 2048)
        defer { disk.unmount() }
        let names = (0..<300).map { _ in TestZone.unique("bound") }
        try await withTestServers { servers in
            var options = servers.options()
            options.databasePath = disk.databasePath
            options.arguments = ["--store-max-pending-changes", "100"]
            try await withHTTPDNSD(options) { service in
                try disk.fill()
                let preload = try await service.client.post(
                    "/v1/default/preload", json: ["hosts": .array(names.map { .string($0) }), "type": "A"])
                #expect(preload.status == 200)
                #expect(preload.json["durable"]?.bool == false)
                #expect(preload.json["resolved"]?.int == names.count)  // answered from memory all the same
                let metrics = try await service.metrics()
                #expect(metrics.sum("httpdns_store_pending_changes") <= 100)
                #expect(metrics.sum("httpdns_store_dropped_writes_total") >= 200)
                #expect(service.log().contains("write-behind queue is full"))

                try disk.free()
                let recovered = try await poll(for: 90, every: .milliseconds(200)) { () async throws -> Bool? in
                    let ready = try await service.client.get("/readyz")
                    return ready.json["store"]?["healthy"]?.bool == true ? true : nil
                }
                #expect(recovered == true, "the store did not recover: \(service.log().suffix(2000))")
                let stillIncomplete = try await service.client.post(
                    "/v1/default/preload", json: ["hosts": [.string(TestZone.unique("after"))], "type": "A"])
                #expect(stillIncomplete.json["durable"]?.bool == false, "\(stillIncomplete.text.prefix(300))")
                #expect(stillIncomplete.json["store_error"]?.string?.hasPrefix("queueFull") == true)

                #expect(try await service.client.delete("/v1/default/cache").status == 200)
                let again = try await service.client.post(
                    "/v1/default/preload", json: ["hosts": [.string(TestZone.unique("flushed"))], "type": "A"])
                #expect(again.json["durable"]?.bool == true, "\(again.text.prefix(300))")
            }
        }
    }
}

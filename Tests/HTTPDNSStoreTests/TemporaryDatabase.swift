import Foundation

/// A fresh temporary directory holding the test's database file; `remove()` deletes it all.
struct TemporaryDatabase {
    let directory: URL
    var path: String { directory.appendingPathComponent("store.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("httpdnsd-store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a fresh temporary database, then removes the directory.
    static func with<T>(_ body: (TemporaryDatabase) async throws -> T) async throws -> T {
        let database = try TemporaryDatabase()
        defer { database.remove() }
        return try await body(database)
    }
}

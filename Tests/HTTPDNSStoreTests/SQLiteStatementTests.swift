import Testing

@testable import HTTPDNSStore

/// Every SQLite result code goes through `SQLiteConnection.check`: nothing is discarded.
@Suite struct SQLiteStatementTests {
    @Test func aBindOutsideTheStatementsParametersThrowsSQLITE_RANGE() async throws {
        try await TemporaryDatabase.with { database in
            let connection = try SQLiteConnection(path: database.path)
            let statement = try connection.prepare("SELECT ?1", persistent: false)
            defer { statement.finalize() }
            let error = #expect(throws: StoreError.self) { try statement.bind(Int64(1), at: 5) }
            #expect(error?.sqliteResultCode == 25)  // SQLITE_RANGE
            #expect(error?.message.contains("binding parameter 5") == true)
            try statement.bind(Int64(7), at: 1)
            #expect(try statement.step())
            #expect(statement.int64(at: 0) == 7)
            try statement.reset()
        }
    }

    @Test func aFailedStepIsThrownOnceAndTheStatementIsReusable() async throws {
        try await TemporaryDatabase.with { database in
            let connection = try SQLiteConnection(path: database.path)
            try connection.execute("CREATE TABLE t(x INTEGER PRIMARY KEY)")
            let insert = try connection.prepare("INSERT INTO t(x) VALUES (?1)", persistent: false)
            defer { insert.finalize() }
            try insert.bind(Int64(1), at: 1)
            try insert.run()
            try insert.bind(Int64(1), at: 1)
            let error = #expect(throws: StoreError.self) { try insert.run() }
            #expect(error?.sqliteResultCode == 19)  // SQLITE_CONSTRAINT
            try insert.bind(Int64(2), at: 1)
            try insert.run()
        }
    }
}

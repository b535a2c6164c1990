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

    /// Texts bound in place reach the row as given (an empty one as "", nil as NULL), and are
    /// unbound when the run returns: the next run without them writes NULLs.
    @Test func textsBoundInPlaceAreStoredAndUnboundAfterTheRun() async throws {
        try await TemporaryDatabase.with { database in
            let connection = try SQLiteConnection(path: database.path)
            try connection.execute("CREATE TABLE t(n INTEGER, a TEXT, b TEXT, c TEXT, d TEXT)")
            let insert = try connection.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)", persistent: false)
            defer { insert.finalize() }
            var texts = SQLiteTexts()
            texts.append("host.example", at: 2)
            texts.append("", at: 3)
            texts.append(nil, at: 4)
            texts.append(at: 5) { $0.append(contentsOf: Array("1.2.3.4,5.6.7.8".utf8)) }
            try insert.bind(Int64(1), at: 1)
            try insert.run(texts: texts)
            try insert.bind(Int64(2), at: 1)
            try insert.run()
            texts.removeAll()
            texts.append("ünïcode", at: 3)
            try insert.bind(Int64(3), at: 1)
            try insert.run(texts: texts)

            let select = try connection.prepare(
                "SELECT n, quote(a), quote(b), quote(c), quote(d) FROM t ORDER BY n", persistent: false)
            defer { select.finalize() }
            var rows: [String] = []
            while try select.step() {
                rows.append((1...4).map { select.text(at: $0) }.joined(separator: " "))
            }
            try select.reset()
            #expect(
                rows == [
                    "'host.example' '' NULL '1.2.3.4,5.6.7.8'",
                    "NULL NULL NULL NULL",
                    "NULL 'ünïcode' NULL NULL",
                ])
        }
    }

    /// A text argument outside the statement's parameters throws, and nothing stays bound.
    @Test func aTextBoundOutsideTheParametersThrowsAndLeavesNothingBound() async throws {
        try await TemporaryDatabase.with { database in
            let connection = try SQLiteConnection(path: database.path)
            try connection.execute("CREATE TABLE t(a TEXT, b TEXT)")
            let insert = try connection.prepare("INSERT INTO t VALUES (?1, ?2)", persistent: false)
            defer { insert.finalize() }
            var texts = SQLiteTexts()
            texts.append("kept?", at: 1)
            texts.append("out of range", at: 3)
            let error = #expect(throws: StoreError.self) { try insert.run(texts: texts) }
            #expect(error?.sqliteResultCode == 25)  // SQLITE_RANGE
            try insert.run()
            let select = try connection.prepare("SELECT count(*) FROM t WHERE a IS NULL AND b IS NULL", persistent: false)
            defer { select.finalize() }
            #expect(try select.step())
            #expect(select.int64(at: 0) == 1)
            try select.reset()
        }
    }
}

import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// The writer side of `SQLiteStore`: the connection and its prepared statements. Confined to
/// the store's writer queue (not `Sendable`); every method runs there.
final class StoreWriter {
    let connection: SQLiteConnection
    private let beginImmediate: SQLiteStatement
    private let commit: SQLiteStatement
    private let upsertEntry: SQLiteStatement
    private let deleteEntry: SQLiteStatement
    private let deleteAccountEntries: SQLiteStatement
    private let selectAccountEntries: SQLiteStatement
    private let deleteExpiredEntries: SQLiteStatement
    private let upsertAccount: SQLiteStatement
    private let selectAccounts: SQLiteStatement
    private let selectFirstCachedAccount: SQLiteStatement
    private let selectNextCachedAccount: SQLiteStatement
    /// The text arguments of an upsert, the addresses among them as the comma-separated text they
    /// are stored as, written here for each row (no array of strings, no joined string per entry).
    private var rowTexts = SQLiteTexts()

    /// Opens `path`, sets WAL, `synchronous=NORMAL` and a busy timeout, migrates the schema and
    /// prepares the statements. Errors name the path.
    init(path: String) throws(StoreError) {
        do {
            connection = try SQLiteConnection.openForWriting(path: path)
            try StoreSchema.migrate(connection)
            beginImmediate = try connection.prepare("BEGIN IMMEDIATE")
            commit = try connection.prepare("COMMIT")
            upsertEntry = try connection.prepare(
                """
                INSERT OR REPLACE INTO cache_entries
                (account, host, family, network, addresses, origin_ttl, stored_at, nxdomain, origin, soa)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                """)
            deleteEntry = try connection.prepare(
                "DELETE FROM cache_entries WHERE account = ?1 AND host = ?2 AND family = ?3 AND network = ?4")
            deleteAccountEntries = try connection.prepare("DELETE FROM cache_entries WHERE account = ?1")
            selectAccountEntries = try connection.prepare(
                """
                SELECT host, family, network, addresses, origin_ttl, stored_at, nxdomain, origin, soa
                FROM cache_entries WHERE account = ?1
                """)
            // Same arithmetic as the Swift side of `loadCache`: expiresAt = stored_at + origin_ttl,
            // expired when now >= expiresAt; kept when keepExpired and now - expiresAt <= window.
            deleteExpiredEntries = try connection.prepare(
                """
                DELETE FROM cache_entries
                WHERE account = ?1 AND stored_at + origin_ttl <= ?2
                AND (?3 = 0 OR ?2 - (stored_at + origin_ttl) > ?4)
                """)
            upsertAccount = try connection.prepare(
                """
                INSERT INTO accounts (id, json, deleted, updated_at) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(id) DO UPDATE SET
                json = excluded.json, deleted = excluded.deleted, updated_at = excluded.updated_at
                """)
            selectAccounts = try connection.prepare("SELECT id, json, deleted FROM accounts")
            // One seek of the primary key per account: `SELECT DISTINCT account` reads every row.
            selectFirstCachedAccount = try connection.prepare("SELECT account FROM cache_entries ORDER BY account LIMIT 1")
            selectNextCachedAccount = try connection.prepare(
                "SELECT account FROM cache_entries WHERE account > ?1 ORDER BY account LIMIT 1")
        } catch {
            throw error.message.contains(path) ? error : error.prefixed("database '\(path)'")
        }
    }

    deinit { close() }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction; rolls back when it throws.
    private func inTransaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try beginImmediate.run()
        do {
            let value = try body()
            try commit.run()
            return value
        } catch {
            rollBack(after: error)
            throw error
        }
    }

    /// Ends a failed transaction, unless SQLite already did (it rolls back by itself after some
    /// errors, e.g. `SQLITE_FULL`). A failed rollback is logged: `error` is what the caller throws.
    private func rollBack(after error: StoreError) {
        guard !connection.isAutocommit else { return }
        do {
            try connection.execute("ROLLBACK")
        } catch let rollbackError {
            Log.error("store: rolling back after '\(error)' failed too: \(rollbackError)")
        }
    }

    /// Steps `statement` through every row, calling `row` for each, then resets it.
    private func forEachRow(of statement: SQLiteStatement, _ row: () -> Void) throws(StoreError) {
        do {
            while try statement.step(failure: .read) { row() }
        } catch {
            statement.resetAfterFailure()
            throw error
        }
        try statement.reset()
    }

    /// Writes `batch` in one transaction; returns the number of writes committed.
    func apply(_ batch: PendingBatch) throws(StoreError) -> Int {
        try inTransaction { () throws(StoreError) -> Int in
            var written = 0
            // Writing in primary-key order turns random B-tree inserts into appends-in-place:
            // a million-change batch commits several times faster than in hash order.
            for (account, pending) in batch.accounts.sorted(by: { $0.key < $1.key }) {
                if pending.removesAll {
                    try deleteAccountEntries.bind(account, at: 1)
                    try deleteAccountEntries.run()
                    written += 1
                }
                // The keys alone are sorted: a change (an entry with its addresses and SOA) is
                // several times larger to move, and is looked up once its turn comes.
                for key in Self.inKeyOrder(pending.changes.keys) {
                    switch pending.changes[key]! {
                    case .upsert(let entry):
                        rowTexts.removeAll()
                        rowTexts.append(account, at: 1)
                        rowTexts.append(key.host.value, at: 2)
                        rowTexts.append(key.network, at: 4)
                        rowTexts.append(at: 5) { entry.addressList.appendCommaSeparated(to: &$0) }
                        rowTexts.append(entry.origin.rawValue, at: 9)
                        rowTexts.append(entry.soa?.description, at: 10)
                        try upsertEntry.bind(Int64(key.family.rawValue), at: 3)
                        try upsertEntry.bind(Int64(entry.originTTL), at: 6)
                        try upsertEntry.bind(entry.storedAt, at: 7)
                        try upsertEntry.bind(Int64(entry.nxdomain ? 1 : 0), at: 8)
                        try upsertEntry.run(texts: rowTexts)
                    case .remove:
                        try deleteRow(account: account, host: key.host.value, family: Int64(key.family.rawValue), network: key.network)
                    }
                    written += 1
                }
            }
            return written
        }
    }

    /// `keys` in the table's primary-key order (host, family, network), the texts compared byte by
    /// byte as SQLite's BINARY collation does, a prefix before what extends it. The texts are copied
    /// once into one buffer and the sort compares slices of it: no comparison touches a string.
    static func inKeyOrder(_ keys: some Collection<CacheKey>) -> [CacheKey] {
        let keys = Array(keys)
        var bytes: [UInt8] = []
        var slots: [KeySlot] = []
        slots.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            let host = bytes.count
            bytes.append(contentsOf: key.host.value.utf8)
            let network = bytes.count
            bytes.append(contentsOf: key.network.utf8)
            slots.append(
                KeySlot(
                    index: index, host: host, hostCount: network - host, family: key.family.rawValue,
                    network: network, networkCount: bytes.count - network))
        }
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress
            slots.sort { lhs, rhs in
                let host = compare(base, lhs.host, lhs.hostCount, rhs.host, rhs.hostCount)
                if host != 0 { return host < 0 }
                if lhs.family != rhs.family { return lhs.family < rhs.family }
                return compare(base, lhs.network, lhs.networkCount, rhs.network, rhs.networkCount) < 0
            }
        }
        return slots.map { keys[$0.index] }
    }

    /// Where a key's texts lie in `inKeyOrder`'s buffer.
    private struct KeySlot {
        var index: Int
        var host: Int
        var hostCount: Int
        var family: UInt16
        var network: Int
        var networkCount: Int
    }

    /// Negative, zero or positive as the bytes at `a` sort before, with or after those at `b`.
    private static func compare(_ base: UnsafePointer<UInt8>?, _ a: Int, _ aCount: Int, _ b: Int, _ bCount: Int) -> Int {
        let common = min(aCount, bCount)
        let compared = common == 0 ? 0 : Int(memcmp(base! + a, base! + b, common))
        return compared != 0 ? compared : aCount - bCount
    }

    private func deleteRow(account: String, host: String, family: Int64, network: String) throws(StoreError) {
        try deleteEntry.bind(account, at: 1)
        try deleteEntry.bind(host, at: 2)
        try deleteEntry.bind(family, at: 3)
        try deleteEntry.bind(network, at: 4)
        try deleteEntry.run()
    }

    /// Stores an account row (`json` nil with `deleted`) in its own transaction, with
    /// `synchronous=FULL` so the commit is on disk (not only in the WAL's page cache) on return.
    func saveAccount(id: String, json: String?, deleted: Bool, now: Timestamp) throws(StoreError) {
        try connection.execute("PRAGMA synchronous=FULL")
        defer {
            // The account's fate is decided by then; a connection left at FULL is only slower.
            do {
                try connection.execute("PRAGMA synchronous=NORMAL")
            } catch {
                Log.error("store: could not set synchronous=NORMAL back: \(error)")
            }
        }
        try inTransaction { () throws(StoreError) in
            try upsertAccount.bind(id, at: 1)
            try upsertAccount.bind(json, at: 2)
            try upsertAccount.bind(Int64(deleted ? 1 : 0), at: 3)
            try upsertAccount.bind(now, at: 4)
            try upsertAccount.run()
        }
    }

    /// All account rows: id → JSON, or nil for a deleted account.
    func loadAccounts() throws(StoreError) -> [String: String?] {
        var accounts: [String: String?] = [:]
        try forEachRow(of: selectAccounts) {
            let id = selectAccounts.text(at: 0)
            if selectAccounts.int64(at: 2) != 0 || selectAccounts.isNull(at: 1) {
                accounts.updateValue(nil, forKey: id)
            } else {
                accounts.updateValue(selectAccounts.text(at: 1), forKey: id)
            }
        }
        return accounts
    }

    /// The accounts that have rows in `cache_entries`, in the key's order: each found by one
    /// seek past the previous one, so the cost follows the number of accounts, not of rows.
    func cachedAccounts() throws(StoreError) -> [String] {
        var accounts: [String] = []
        try forEachRow(of: selectFirstCachedAccount) { accounts.append(selectFirstCachedAccount.text(at: 0)) }
        while let last = accounts.last {
            try selectNextCachedAccount.bind(last, at: 1)
            var next: String?
            try forEachRow(of: selectNextCachedAccount) { next = selectNextCachedAccount.text(at: 0) }
            guard let next else { break }
            accounts.append(next)
        }
        return accounts
    }

    /// Reads one account's persisted cache in one transaction: unexpired entries, plus expired
    /// ones no older than `window` seconds when `keepExpired`; deletes the other expired rows
    /// and rows whose host, family or SOA no longer validates. The rows are read once; the
    /// expired ones are deleted by a second pass only when the first met one (after a clean
    /// stop, usually none: that pass read every row of the account again). The entries go to
    /// `deliver` in batches of up to `batchSize`, in the rows' order, as they are read.
    func loadCache(
        account: String, now: Timestamp, window: Double, keepExpired: Bool, batchSize: Int,
        deliver: (consuming [(CacheKey, CacheEntry)]) -> Void
    ) throws(StoreError) -> WarmLoadResult {
        try inTransaction { () throws(StoreError) -> WarmLoadResult in
            var result = WarmLoadResult()
            var batch: [(CacheKey, CacheEntry)] = []
            batch.reserveCapacity(batchSize)
            var invalid: [(host: String, family: Int64, network: String)] = []
            var metExpired = false
            // The batch goes whole: the receiver holds the only reference and moves the entries out.
            func handOver() {
                result.loaded += batch.count
                var full: [(CacheKey, CacheEntry)] = []
                swap(&full, &batch)
                deliver(consume full)
            }
            let rows = selectAccountEntries
            try rows.bind(account, at: 1)
            try forEachRow(of: rows) {
                let ttl = rows.int64(at: 4)
                let storedAt = rows.double(at: 5)
                let expiresAt = storedAt + Double(ttl)
                if now >= expiresAt && (!keepExpired || now - expiresAt > window) {
                    metExpired = true
                    return
                }
                let soaText: String? = rows.isNull(at: 8) ? nil : rows.text(at: 8)
                let soa = soaText.flatMap { NegativeAnswerSOA($0) }
                let familyRaw = rows.int64(at: 1)
                // From the column's bytes: one scan and one String, made only for a valid name.
                guard let host = rows.withText(at: 0, { HostName(utf8: UnsafeRawBufferPointer($0)) }),
                    let familyValue = UInt16(exactly: familyRaw),
                    let family = RecordFamily(rawValue: familyValue),
                    let originTTL = UInt32(exactly: ttl),
                    soaText == nil || soa != nil
                else {
                    invalid.append((rows.text(at: 0), familyRaw, rows.text(at: 2)))
                    return
                }
                // Read as bytes: splitting a String of addresses was a seventh of a warm load.
                let entry = CacheEntry(
                    addressList: rows.withText(at: 3) { AddressList(commaSeparated: $0) },
                    originTTL: originTTL,
                    storedAt: storedAt,
                    nxdomain: rows.int64(at: 6) != 0,
                    origin: rows.withText(at: 7) { AnswerSource(rawValue: $0) } ?? .upstream,
                    soa: soa)
                batch.append((CacheKey(host: host, family: family, network: rows.text(at: 2)), entry))
                if batch.count >= batchSize {
                    handOver()
                    batch.reserveCapacity(batchSize)
                }
            }
            if !batch.isEmpty { handOver() }
            if metExpired {
                try deleteExpiredEntries.bind(account, at: 1)
                try deleteExpiredEntries.bind(now, at: 2)
                try deleteExpiredEntries.bind(Int64(keepExpired ? 1 : 0), at: 3)
                try deleteExpiredEntries.bind(window, at: 4)
                try deleteExpiredEntries.run()
                result.discardedExpired = connection.changes
            }
            for row in invalid {
                try deleteRow(account: account, host: row.host, family: row.family, network: row.network)
            }
            result.skippedInvalid = invalid.count
            return result
        }
    }

    /// Finalizes the statements and closes the connection. Idempotent.
    func close() {
        for statement in [
            beginImmediate, commit, upsertEntry, deleteEntry, deleteAccountEntries, selectAccountEntries,
            deleteExpiredEntries, upsertAccount, selectAccounts, selectFirstCachedAccount, selectNextCachedAccount,
        ] {
            statement.finalize()
        }
        connection.close()
    }
}

@available(*, unavailable)
extension StoreWriter: Sendable {}

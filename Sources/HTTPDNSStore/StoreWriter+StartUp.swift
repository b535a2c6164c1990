import HTTPDNSCore

extension StoreError {
    /// True for the errors that say the database file itself is damaged.
    var isDamage: Bool { code == .corrupt || code == .notADatabase }
}

extension StoreWriter {
    /// Opens the database at `path` when the service starts. A file SQLite reports damaged
    /// (`isDamage`), when it is opened or when its accounts are read, is moved aside
    /// (`FileMoves.moveDamaged`, with its `-wal` and `-shm`) and a new database is made in its
    /// place: the service starts without the accounts only that file held, and the file stays
    /// for the operator. Any other failure (no permission, a newer schema) throws.
    static func openAtStartUp(path: String, now: Timestamp) throws(StoreError) -> (StoreWriter, DamagedFile?) {
        let damage: StoreError
        do throws(StoreError) {
            let writer = try StoreWriter(path: path)
            do throws(StoreError) {
                _ = try writer.loadAccounts()
                return (writer, nil)
            } catch {
                writer.close()
                throw error
            }
        } catch {
            guard error.isDamage else { throw error }
            damage = error
        }
        let aside = try FileMoves.moveDamaged(path, now: now)
        let fresh = try StoreWriter(path: path)
        return (fresh, DamagedFile(path: path, movedTo: aside, reason: StoreHealth.reason(damage), at: now, atStartUp: true))
    }
}

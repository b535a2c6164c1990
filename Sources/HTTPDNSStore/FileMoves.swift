import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// Renames files for `SQLiteStore` (`rename(2)`), with errors as `StoreError`.
enum FileMoves {
    /// Renames `path` to `destination`.
    static func move(_ path: String, to destination: String) throws(StoreError) {
        guard rename(path, destination) == 0 else {
            let code = errno
            throw StoreError(code: .write, message: "cannot rename '\(path)' to '\(destination)': \(String(cString: strerror(code)))")
        }
    }

    /// Moves a damaged database `path`, and its `-wal` and `-shm` files when present, to
    /// `<path>.corrupt-<now>` (`-2`, `-3`, ... added when that name is taken: an earlier damaged
    /// file is never overwritten). Returns the new path of the database file.
    static func moveDamaged(_ path: String, now: Timestamp) throws(StoreError) -> String {
        let base = "\(path).corrupt-\(Int(now))"
        var aside = base
        var attempt = 1
        while access(aside, F_OK) == 0 || access(aside + "-wal", F_OK) == 0 {
            attempt += 1
            aside = "\(base)-\(attempt)"
        }
        try move(path, to: aside)
        for suffix in ["-wal", "-shm"] { try moveIfPresent(path + suffix, to: aside + suffix) }
        return aside
    }

    /// Renames `path` to `destination` when `path` exists.
    static func moveIfPresent(_ path: String, to destination: String) throws(StoreError) {
        guard rename(path, destination) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw StoreError(code: .write, message: "cannot rename '\(path)' to '\(destination)': \(String(cString: strerror(code)))")
        }
    }
}

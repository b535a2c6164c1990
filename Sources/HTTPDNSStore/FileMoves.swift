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

    /// Renames `path` to `destination` when `path` exists.
    static func moveIfPresent(_ path: String, to destination: String) throws(StoreError) {
        guard rename(path, destination) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw StoreError(code: .write, message: "cannot rename '\(path)' to '\(destination)': \(String(cString: strerror(code)))")
        }
    }
}

import CSQLite
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An SQLite VFS that is the default (unix) one with every file's `xSync` counted: what a
/// commit really asks of the disk. In WAL mode `synchronous=FULL` syncs the WAL at each commit
/// and `NORMAL` only at checkpoints, so a commit that syncs nothing is one a power loss can undo.
/// A connection uses it through the URI `file:<path>?vfs=<name>` (`uri(_:)`; SQLite is built
/// with URI filenames on, and `opens` shows that the file really went through this VFS).
enum SyncCountingVFS {
    static let name = "httpdnsd-sync-counting"

    /// The URI that opens `path` through this VFS (registered by the call).
    static func uri(_ path: String) -> String {
        _ = registered
        return "file:\(path)?vfs=\(name)"
    }

    /// `xSync` calls so far on files whose name (as SQLite gives it) ends with `suffix`; a
    /// database's `-wal` is a file of its own.
    static func syncs(endingWith suffix: String) -> Int {
        state.withLock { state in state.syncs.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    /// Files opened so far whose name ends with `suffix`.
    static func opens(endingWith suffix: String) -> Int {
        state.withLock { state in state.opens.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    private struct OpenFile {
        var name: String
        /// The methods the unix VFS gave it (main databases and journals get different ones).
        var methods: UInt
    }

    private struct State {
        var files: [UInt: OpenFile] = [:]
        var syncs: [String: Int] = [:]
        var opens: [String: Int] = [:]
        /// Counting copies of the unix VFS's methods tables, by original.
        var countingMethods: [UInt: UInt] = [:]
    }

    private static let state = Mutex(State())
    /// The default VFS, set once by `registered`.
    private nonisolated(unsafe) static var original: UnsafeMutablePointer<sqlite3_vfs>?

    private static let registered: Void = {
        guard let base = sqlite3_vfs_find(nil) else { fatalError("SQLite has no default VFS") }
        original = base
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        // A copy keeps `pAppData` (the unix VFS finds its locking style there) and every method.
        vfs.initialize(to: base.pointee)
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pNext = nil
        vfs.pointee.xOpen = { vfs, name, file, flags, outFlags in
            guard let base = SyncCountingVFS.original, let open = base.pointee.xOpen else { return SQLITE_ERROR }
            let result = open(vfs, name, file, flags, outFlags)
            if result == SQLITE_OK, let file, let name { SyncCountingVFS.count(file, named: String(cString: name)) }
            return result
        }
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { fatalError("sqlite3_vfs_register failed") }
    }()

    /// Records `file` and points it at a counting copy of its methods.
    private static func count(_ file: UnsafeMutablePointer<sqlite3_file>, named name: String) {
        guard let methods = file.pointee.pMethods else { return }
        let key = UInt(bitPattern: methods)
        let counting = state.withLock { state -> UInt in
            state.opens[name, default: 0] += 1
            state.files[UInt(bitPattern: file)] = OpenFile(name: name, methods: key)
            if let counting = state.countingMethods[key] { return counting }
            let copy = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
            copy.initialize(to: methods.pointee)
            copy.pointee.xSync = { file, flags in
                let original = SyncCountingVFS.originalMethods(of: file, countingASync: true)
                return original?.pointee.xSync?(file, flags) ?? SQLITE_IOERR
            }
            copy.pointee.xClose = { file in
                let original = SyncCountingVFS.originalMethods(of: file, forgetting: true)
                return original?.pointee.xClose?(file) ?? SQLITE_IOERR
            }
            state.countingMethods[key] = UInt(bitPattern: copy)
            return UInt(bitPattern: copy)
        }
        file.pointee.pMethods = UnsafePointer(bitPattern: counting)
    }

    /// The methods `file` was opened with; counts a sync of it, or forgets it (it is closing).
    private static func originalMethods(
        of file: UnsafeMutablePointer<sqlite3_file>?, countingASync: Bool = false, forgetting: Bool = false
    ) -> UnsafePointer<sqlite3_io_methods>? {
        state.withLock { state in
            let address = UInt(bitPattern: file)
            guard let open = state.files[address] else { return nil }
            if countingASync { state.syncs[open.name, default: 0] += 1 }
            if forgetting { state.files[address] = nil }
            return UnsafePointer(bitPattern: open.methods)
        }
    }
}

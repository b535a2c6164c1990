import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the files the configuration names (`--config`, `adminTokenFile`) with the reason a
/// read fails in words an operator can act on: Foundation's `Data(contentsOf:)` reports an empty
/// device such as /dev/null as "You don't have permission" and a directory as
/// "NSCocoaErrorDomain error 256".
public enum ConfigFile {
    /// Larger than any configuration: a device that never ends (`/dev/zero`) stops here.
    static let maxBytes = 16 << 20

    /// Why a file cannot be read; `description` names the path and the problem.
    public struct ReadError: Error, Sendable, CustomStringConvertible, Equatable {
        public var path: String
        public var problem: String
        public var description: String { "'\(path)' \(problem)" }
    }

    /// The bytes of `path`, or why there are none to use.
    public static func read(_ path: String) throws(ReadError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(path: path, problem: openProblem(errno)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw ReadError(path: path, problem: "cannot be examined: \(errorText(errno))") }
        if status.st_mode & S_IFMT == S_IFDIR {
            throw ReadError(path: path, problem: "is a directory, not a file")
        }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(path: path, problem: "cannot be read: \(errorText(errno))")
            }
            data.append(contentsOf: chunk[0..<count])
            if data.count > maxBytes { throw ReadError(path: path, problem: "is larger than \(maxBytes >> 20) MiB") }
        }
        if data.isEmpty { throw ReadError(path: path, problem: "is empty") }
        return data
    }

    static func openProblem(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "does not exist"
        case EACCES: return "is not readable by this process (user id \(getuid())): permission denied"
        case ENOTDIR: return "does not exist (a part of the path is not a directory)"
        default: return "cannot be opened: \(errorText(code))"
        }
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}

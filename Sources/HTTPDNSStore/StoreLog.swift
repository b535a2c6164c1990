#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the store's diagnostics to stderr (`write(2)`, no buffering, safe from any thread).
enum StoreLog {
    static func error(_ message: String) {
        var line = "httpdnsd: store: \(message)\n"
        line.withUTF8 { bytes in
            _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One-line logs on standard error: `2026-11-29T21:30:00Z level message`. Secrets are never
/// passed here (callers log account ids and upstream names, not credentials).
public enum Log {
    public enum Level: String, Sendable {
        case info
        case warning
        case error
    }

    public static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message()) }

    public static func write(_ level: Level, _ message: String) {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [UInt8](repeating: 0, count: 32)
        let length = buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: 32) {
                strftime($0, 32, "%Y-%m-%dT%H:%M:%SZ", &parts)
            }
        }
        let line = "\(String(decoding: buffer[..<length], as: UTF8.self)) \(level.rawValue) \(message)\n"
        // One write(2) per line keeps lines whole when several threads log at once.
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

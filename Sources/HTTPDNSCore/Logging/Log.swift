#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One-line logs on standard error: `2026-11-29T21:30:00Z level message`. Secrets are never
/// passed here (callers log account ids and upstream names, not credentials; upstream names
/// are `UpstreamSpec.description`, which holds no credentials).
///
/// Every message is escaped here, the one funnel all log text passes through: text from a
/// request (account ids, host names, a peer's header) cannot end the line or start a forged
/// one. Control characters, DEL, the C1 controls and the Unicode line and paragraph separators
/// become `\n`, `\r`, `\t` or `\u{XX}`; a backslash becomes `\\`, so an escape in the log
/// always means an escaped character.
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
        let line = "\(String(decoding: buffer[..<length], as: UTF8.self)) \(level.rawValue) \(escaped(message))\n"
        // One write(2) per line keeps lines whole when several threads log at once.
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// `text` with every character that could break or fake a log line escaped (see above).
    /// Returns `text` itself when nothing needs escaping (the usual case).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscaping(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }

    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || value == 0x5C
    }
}

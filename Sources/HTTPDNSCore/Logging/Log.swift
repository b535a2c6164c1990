import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line per event on standard error, as text (`2026-11-29T21:30:00.123Z info message k=v`)
/// or JSON (`{"time":"2026-11-29T21:30:00.123Z","level":"info","msg":"message","k":"v"}`, one
/// object a line), at or above the configured level (`logFormat`, `logLevel`). Secrets are never
/// passed here (callers log account ids and upstream names, not credentials; upstream names are
/// `UpstreamSpec.description`, which holds no credentials).
///
/// Every message and field is escaped here, the one funnel all log text passes through: text
/// from a request (account ids, host names, a peer's header) cannot end the line or start a
/// forged one. Control characters, DEL, the C1 controls and the Unicode line and paragraph
/// separators become `\n`, `\r`, `\t` or `\u{XX}` in text (`\u00XX` in JSON); a backslash
/// becomes `\\`, so an escape in the log always means an escaped character.
public enum Log {
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug
        case info
        case warning
        case error

        var rank: UInt8 {
            switch self {
            case .debug: 0
            case .info: 1
            case .warning: 2
            case .error: 3
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    public enum Format: String, Sendable, CaseIterable {
        case text
        case json
    }

    private static let minimumRank = Atomic<UInt8>(Level.info.rank)
    private static let jsonFormat = Atomic<Bool>(false)

    /// Sets the lowest level written and the line format (at start-up, before other threads log).
    public static func configure(level: Level, format: Format) {
        minimumRank.store(level.rank, ordering: .releasing)
        jsonFormat.store(format == .json, ordering: .releasing)
    }

    /// Whether a line at `level` is written: callers with costly fields check it first.
    public static func isEnabled(_ level: Level) -> Bool { level.rank >= minimumRank.load(ordering: .relaxed) }

    public static var format: Format { jsonFormat.load(ordering: .relaxed) ? .json : .text }

    public static func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any LogValue)] = []) {
        guard isEnabled(.debug) else { return }
        write(.debug, message(), fields: fields())
    }

    public static func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any LogValue)] = []) {
        guard isEnabled(.info) else { return }
        write(.info, message(), fields: fields())
    }

    public static func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any LogValue)] = []) {
        guard isEnabled(.warning) else { return }
        write(.warning, message(), fields: fields())
    }

    public static func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any LogValue)] = []) {
        write(.error, message(), fields: fields())
    }

    /// Writes one line (if `level` is enabled) on standard error through `LogSink`: at once, or
    /// with `buffered` handed to the sink's writer thread (the access log: a line per request,
    /// from HTTP threads that must not wait on the output).
    public static func write(_ level: Level, _ message: String, fields: [(String, any LogValue)] = [], buffered: Bool = false) {
        guard isEnabled(level) else { return }
        let bytes = line(level, message, fields: fields, format: format, time: timestamp())
        if buffered { LogSink.shared.append(bytes) } else { LogSink.shared.write(bytes) }
    }

    /// The bytes of one line, newline included.
    public static func line(_ level: Level, _ message: String, fields: [(String, any LogValue)], format: Format, time: String) -> [UInt8] {
        var line = ""
        line.reserveCapacity(message.utf8.count + 48 + fields.count * 24)
        switch format {
        case .text:
            line += time
            line += " "
            line += level.rawValue
            line += " "
            line += escaped(message)
            for (key, value) in fields {
                line += " "
                line += key
                line += "="
                let shown = escaped(value.logText)
                if shown.isEmpty || shown.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) {
                    line += "\""
                    line += shown.replacing("\"", with: "\\\"")
                    line += "\""
                } else {
                    line += shown
                }
            }
        case .json:
            line += #"{"time":""#
            line += time
            line += #"","level":""#
            line += level.rawValue
            line += #"","msg":"#
            appendJSONString(message, to: &line)
            for (key, value) in fields {
                line += ","
                appendJSONString(key, to: &line)
                line += ":"
                if value.isJSONLiteral { line += value.logText } else { appendJSONString(value.logText, to: &line) }
            }
            line += "}"
        }
        line += "\n"
        return Array(line.utf8)
    }

    /// Now as RFC 3339 UTC with milliseconds: `2026-11-29T21:30:00.123Z`.
    public static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(secondsText(now.tv_sec)).\(fraction)Z"
    }

    /// A Unix time as ISO 8601 / RFC 3339 UTC, to the second: `2027-01-01T00:00:00Z` (for times
    /// a log line names, such as a certificate's expiry).
    public static func utcTime(unixSeconds: Int) -> String { "\(secondsText(unixSeconds))Z" }

    /// `YYYY-MM-DDThh:mm:ss` in UTC.
    private static func secondsText(_ unixSeconds: Int) -> String {
        var seconds = time_t(unixSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [UInt8](repeating: 0, count: 32)
        let length = buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: 32) {
                strftime($0, 32, "%Y-%m-%dT%H:%M:%S", &parts)
            }
        }
        return String(decoding: buffer[..<length], as: UTF8.self)
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

    /// `text` as a JSON string (quotes included): the same characters as `escaped`, plus `"`,
    /// in JSON's escapes.
    static func appendJSONString(_ text: String, to line: inout String) {
        line += "\""
        guard text.unicodeScalars.contains(where: { needsEscaping($0) || $0 == "\"" }) else {
            line += text
            line += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            default:
                if needsEscaping(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    line.unicodeScalars.append(scalar)
                }
            }
        }
        line += "\""
    }

    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || value == 0x5C
    }
}

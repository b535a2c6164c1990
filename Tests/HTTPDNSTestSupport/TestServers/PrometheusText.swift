import Foundation

/// Samples parsed from a Prometheus text exposition (format 0.0.4), for checking counters.
public struct PrometheusText: Sendable {
    /// One `name{labels} value` line.
    public struct Sample: Sendable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    /// All samples in document order.
    public var samples: [Sample]
    /// Metric names declared with `# TYPE`, mapped to their type.
    public var types: [String: String]
    /// Metric names that have a `# HELP` line.
    public var helped: Set<String>

    public init(_ text: String) {
        samples = []
        types = [:]
        helped = []
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                if parts.count >= 4, parts[1] == "TYPE" { types[parts[2]] = parts[3] }
                if parts.count >= 3, parts[1] == "HELP" { helped.insert(parts[2]) }
                continue
            }
            if let sample = PrometheusText.parseSample(line) { samples.append(sample) }
        }
    }

    /// Sum of the samples named `name` whose labels include all of `labels`; 0 when none. Unless
    /// `labels` names an account, only the totals count (samples without an `account` label, as
    /// PromQL's `{account=""}`): per-account series repeat them on the operations listener.
    public func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        matching(name, labels).filter { labels["account"] != nil || $0.labels["account"] == nil }.reduce(0) { $0 + $1.value }
    }

    /// The samples named `name` whose labels include all of `labels`.
    public func matching(_ name: String, _ labels: [String: String] = [:]) -> [Sample] {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
    }

    private static func parseSample(_ line: String) -> Sample? {
        var labels: [String: String] = [:]
        let name: String
        let rest: Substring
        if let brace = line.firstIndex(of: "{") {
            name = String(line[..<brace])
            guard let close = line.lastIndex(of: "}") else { return nil }
            labels = parseLabels(line[line.index(after: brace)..<close])
            rest = line[line.index(after: close)...]
        } else {
            guard let space = line.firstIndex(of: " ") else { return nil }
            name = String(line[..<space])
            rest = line[space...]
        }
        guard let valueText = rest.split(separator: " ").first else { return nil }
        let value: Double
        switch valueText {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(valueText) else { return nil }
            value = parsed
        }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func parseLabels(_ text: Substring) -> [String: String] {
        var labels: [String: String] = [:]
        var index = text.startIndex
        while index < text.endIndex {
            guard let equals = text[index...].firstIndex(of: "=") else { break }
            let key = text[index..<equals].trimmingCharacters(in: .whitespaces.union(.init(charactersIn: ",")))
            var cursor = text.index(after: equals)
            guard cursor < text.endIndex, text[cursor] == "\"" else { break }
            cursor = text.index(after: cursor)
            var value = ""
            while cursor < text.endIndex, text[cursor] != "\"" {
                if text[cursor] == "\\", text.index(after: cursor) < text.endIndex {
                    cursor = text.index(after: cursor)
                    value.append(text[cursor] == "n" ? "\n" : text[cursor])
                } else {
                    value.append(text[cursor])
                }
                cursor = text.index(after: cursor)
            }
            labels[key] = value
            index = cursor < text.endIndex ? text.index(after: cursor) : cursor
        }
        return labels
    }
}

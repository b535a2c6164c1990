/// A strict reading of a Prometheus text exposition (0.0.4): every sample must belong to a family
/// announced by `# HELP` then `# TYPE`, and a family's samples must follow its header without
/// another family in between. Violations are collected in `problems`.
struct MetricsText {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var samples: [Sample] = []
    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    var problems: [String] = []
    /// Families in the order their headers appear.
    var families: [String] = []

    init(_ text: String) {
        var current: String?
        var closed = Set<String>()
        if !text.isEmpty && !text.hasSuffix("\n") { problems.append("the text does not end with a newline") }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) where !line.isEmpty {
            if line.hasPrefix("# HELP ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count == 4 else { problems.append("bad HELP line: \(line)"); continue }
                if helps[parts[2]] != nil { problems.append("second HELP for \(parts[2])") }
                helps[parts[2]] = parts[3]
                if let current { closed.insert(current) }
                current = nil
                families.append(parts[2])
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ").map(String.init)
                guard parts.count == 4 else { problems.append("bad TYPE line: \(line)"); continue }
                if helps[parts[2]] == nil { problems.append("TYPE before HELP for \(parts[2])") }
                if types[parts[2]] != nil { problems.append("second TYPE for \(parts[2])") }
                guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                    problems.append("unknown type \(parts[3])")
                    continue
                }
                types[parts[2]] = parts[3]
                current = parts[2]
            } else if line.hasPrefix("#") {
                continue
            } else {
                guard let sample = Self.parse(line) else { problems.append("unparseable sample: \(line)"); continue }
                let family = familyName(sample.name)
                if types[family] == nil { problems.append("sample before its HELP/TYPE: \(line)") }
                if family != current { problems.append("sample outside its family block: \(line)") }
                if closed.contains(family) { problems.append("family \(family) continues after another: \(line)") }
                samples.append(sample)
            }
        }
    }

    /// The family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own.
    private func familyName(_ name: String) -> String {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return name
    }

    /// The sum of the samples named `name` whose labels include `labels` (0 when none); unless
    /// `labels` names an account, of the totals only (samples without an `account` label).
    func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
                && (labels["account"] != nil || sample.labels["account"] == nil)
        }.reduce(0) { $0 + $1.value }
    }

    /// The value of the one sample named `name` with exactly these labels; nil when absent.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    private static func parse(_ line: String) -> Sample? {
        var labels: [String: String] = [:]
        let name: String
        var rest: Substring
        if let brace = line.firstIndex(of: "{") {
            name = String(line[..<brace])
            var index = line.index(after: brace)
            while index < line.endIndex, line[index] != "}" {
                guard let equals = line[index...].firstIndex(of: "=") else { return nil }
                let key = String(line[index..<equals])
                var cursor = line.index(after: equals)
                guard cursor < line.endIndex, line[cursor] == "\"" else { return nil }
                cursor = line.index(after: cursor)
                var value = ""
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\" {
                        cursor = line.index(after: cursor)
                        guard cursor < line.endIndex else { return nil }
                        switch line[cursor] {
                        case "n": value.append("\n")
                        case "\\", "\"": value.append(line[cursor])
                        default: return nil
                        }
                    } else {
                        value.append(line[cursor])
                    }
                    cursor = line.index(after: cursor)
                }
                guard cursor < line.endIndex else { return nil }
                labels[key] = value
                index = line.index(after: cursor)
                if index < line.endIndex, line[index] == "," { index = line.index(after: index) }
            }
            guard index < line.endIndex else { return nil }
            rest = line[line.index(after: index)...]
        } else {
            guard let space = line.firstIndex(of: " ") else { return nil }
            name = String(line[..<space])
            rest = line[space...]
        }
        guard rest.first == " " else { return nil }
        rest = rest.dropFirst()
        let parts = rest.split(separator: " ")
        guard (1...2).contains(parts.count), let value = Double(parts[0]) else { return nil }
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }), !name.isEmpty else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}

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
                if types[sample.name] == nil { problems.append("sample before its HELP/TYPE: \(line)") }
                if sample.name != current { problems.append("sample outside its family block: \(line)") }
                if closed.contains(sample.name) { problems.append("family \(sample.name) continues after another: \(line)") }
                samples.append(sample)
            }
        }
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

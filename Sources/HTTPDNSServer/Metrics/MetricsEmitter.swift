import HTTPDNSCore

/// Writes the Prometheus text format (0.0.4) into one buffer: each family's `# HELP` and
/// `# TYPE` once, before its first sample, and all its samples together, even when they are
/// added from several places (a sample of a family already followed by another is inserted at
/// the end of its own family). Label values and help texts are escaped as the format requires;
/// a label whose value is empty is left out, which Prometheus reads as the same series.
public struct MetricsEmitter {
    /// The exposition so far, UTF-8.
    public private(set) var bytes: [UInt8] = []
    /// Families in buffer order, with where each ends in `bytes`.
    private var families: [(descriptor: MetricDescriptor, end: Int)] = []
    /// The index in `families` of each family's name.
    private var positions: [String: Int] = [:]

    public init() {}

    /// The exposition so far, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Writes the family's `# HELP` and `# TYPE` unless they were written: a family with no
    /// samples still announces itself.
    public mutating func declare(_ descriptor: MetricDescriptor) {
        if let position = positions[descriptor.name] {
            precondition(families[position].descriptor == descriptor, "two descriptors named \(descriptor.name)")
            return
        }
        var header = "# HELP \(descriptor.name) "
        Self.escapeHelp(descriptor.help, into: &header)
        header += "\n# TYPE \(descriptor.name) \(descriptor.type.rawValue)\n"
        bytes.append(contentsOf: header.utf8)
        positions[descriptor.name] = families.count
        families.append((descriptor, bytes.count))
    }

    /// One sample of a counter or gauge; `labels` are the values of `descriptor.labelNames`.
    public mutating func sample(_ descriptor: MetricDescriptor, _ labels: [String] = [], _ value: UInt64) {
        precondition(descriptor.type != .histogram, "\(descriptor.name) is a histogram")
        write(descriptor, line(descriptor.name, descriptor.labelNames, labels, value: String(value)))
    }

    /// One sample of a counter or gauge, written as Prometheus writes floats (`+Inf`, `-Inf`, `NaN`).
    public mutating func sample(_ descriptor: MetricDescriptor, _ labels: [String] = [], float value: Double) {
        precondition(descriptor.type != .histogram, "\(descriptor.name) is a histogram")
        write(descriptor, line(descriptor.name, descriptor.labelNames, labels, value: Self.format(value)))
    }

    /// One histogram series: a cumulative `_bucket` sample per bound of `DurationBuckets` (`le`,
    /// then `+Inf`), `_sum` in seconds and `_count`.
    public mutating func histogram(_ descriptor: MetricDescriptor, _ labels: [String] = [], _ counts: HistogramCounts) {
        precondition(descriptor.type == .histogram, "\(descriptor.name) is not a histogram")
        var text = ""
        let bucketNames = descriptor.labelNames + ["le"]
        var cumulative: UInt64 = 0
        for (index, bucket) in counts.buckets.enumerated() {
            cumulative &+= bucket
            text += line(descriptor.name + "_bucket", bucketNames, labels + [Self.leLabels[index]], value: String(cumulative))
        }
        text += line(descriptor.name + "_sum", descriptor.labelNames, labels, value: Self.format(counts.sumSeconds))
        text += line(descriptor.name + "_count", descriptor.labelNames, labels, value: String(cumulative))
        write(descriptor, text)
    }

    /// Appends `text` (whole sample lines) to its family, announcing the family first if new.
    private mutating func write(_ descriptor: MetricDescriptor, _ text: String) {
        declare(descriptor)
        let position = positions[descriptor.name]!
        let end = families[position].end
        let added = Array(text.utf8)
        if position == families.count - 1 {
            bytes.append(contentsOf: added)
        } else {
            bytes.insert(contentsOf: added, at: end)
            for later in (position + 1)..<families.count { families[later].end += added.count }
        }
        families[position].end = end + added.count
    }

    /// `name{label="value",…} value\n`, labels with empty values left out (no braces when none is left).
    private func line(_ name: String, _ names: [String], _ values: [String], value: String) -> String {
        precondition(names.count == values.count, "\(name) takes the labels \(names), got \(values.count) values")
        var text = name
        var first = true
        for (label, labelValue) in zip(names, values) where !labelValue.isEmpty {
            text += first ? "{" : ","
            first = false
            text += label
            text += "=\""
            Self.escapeLabelValue(labelValue, into: &text)
            text += "\""
        }
        if !first { text += "}" }
        text += " "
        text += value
        text += "\n"
        return text
    }

    /// A label value as the format writes it: backslash, double quote and newline escaped.
    public static func escapeLabelValue(_ value: String, into text: inout String) {
        for character in value {
            switch character {
            case "\\": text += "\\\\"
            case "\"": text += "\\\""
            case "\n": text += "\\n"
            default: text.append(character)
            }
        }
    }

    /// A help text as the format writes it: backslash and newline escaped (quotes are not).
    static func escapeHelp(_ help: String, into text: inout String) {
        for character in help {
            switch character {
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            default: text.append(character)
            }
        }
    }

    /// A float as the format writes it: `+Inf`, `-Inf`, `NaN`, else Swift's shortest form.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        return "\(value)"
    }

    /// The `le` values of `DurationBuckets`, as Prometheus writes them (`0.0001` … `10`, `+Inf`).
    static let leLabels: [String] =
        DurationBuckets.bounds.map { bound in
            bound == bound.rounded() ? String(Int(bound)) : "\(bound)"
        } + ["+Inf"]
}

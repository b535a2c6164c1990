/// One metric family of `/metrics`: its name, help text, type and label names, declared once
/// beside the code that counts it and handed to `MetricsEmitter` with every sample.
public struct MetricDescriptor: Sendable, Equatable {
    /// The Prometheus types this service exposes.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public let name: String
    public let help: String
    public let type: Kind
    /// The labels of a sample, in the order they are written; a histogram's `le` is not among
    /// them (the emitter adds it last).
    public let labelNames: [String]

    public init(_ name: String, _ type: Kind, help: String, labels: [String] = []) {
        precondition(!labels.contains("le"), "le is the emitter's label of histogram buckets")
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labels
    }
}

/// An error of the test harness itself (a server did not start, a port did not open, ...).
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

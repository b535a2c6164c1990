import HTTPDNSCore
import HTTPDNSLoop

extension LoopServices {
    /// What the Redis connections' loops use: HTTPDNSCore's thread names and its throttled
    /// `EventLoopLog`.
    static let service = LoopServices(
        nameThread: { ThreadName.setCurrent($0) }, report: { EventLoopLog.failure(call: $0.call, "\($0)") })
}

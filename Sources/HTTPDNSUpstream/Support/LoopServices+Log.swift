import HTTPDNSCore
import HTTPDNSLoop

extension LoopServices {
    /// What this module's loops (curl's, c-ares', the speed prober's) use: HTTPDNSCore's thread
    /// names and `LoopCall.report`.
    static let service = LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { LoopCall.report($0) })
}

extension LoopCall {
    /// Logs a failure the loop survives, through HTTPDNSCore's throttled `EventLoopLog`.
    static func report(_ failure: Failure) {
        EventLoopLog.failure(call: failure.call, "\(failure)")
    }
}

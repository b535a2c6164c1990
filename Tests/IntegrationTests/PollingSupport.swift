import Foundation
import HTTPDNSTestSupport
import Testing

/// Calls `probe` every `interval` until it returns a value or `seconds` have passed; returns
/// that value, or nil at the deadline. For effects of background work (refreshes, prefetches),
/// with a deadline generous enough for a loaded machine: never a timing assertion.
func poll<T>(
    for seconds: Double = 30, every interval: Duration = .milliseconds(50),
    _ probe: () async throws -> T?
) async throws -> T? {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if let value = try await probe() { return value }
        guard Date() < deadline else { return nil }
        try await Task.sleep(for: interval)
    }
}

/// Sleeps until `seconds` after `start` (at once when that moment has passed).
func sleep(until seconds: Double, after start: Date) async throws {
    let left = start.addingTimeInterval(seconds).timeIntervalSinceNow
    if left > 0 { try await Task.sleep(for: .milliseconds(Int(left * 1000))) }
}

/// The `/v1/{account}/stats` record of `domain` with record type `type` (1 or 28), nil if none.
func statsRecord(
    _ service: HTTPDNSDProcess, account: String = "default", domain: String,
    type: Int = 1
) async throws -> TestJSON? {
    let response = try await service.client.get("/v1/\(account)/stats")
    guard response.status == 200 else { throw HarnessError("stats answered \(response)") }
    return response.json.array?.first { $0["domain"]?.string == domain && $0["type"]?.int == type }
}

/// A counter of `/metrics` summed over every series. The public listener shows no `account`
/// label (account ids would list the tenants), so with one account this is that account's count.
func accountMetric(_ service: HTTPDNSDProcess, _ name: String) async throws -> Double {
    try await service.metrics().sum(name)
}

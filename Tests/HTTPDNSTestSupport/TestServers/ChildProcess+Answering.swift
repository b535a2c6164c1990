extension ChildProcess {
    /// Waits until `GET path` through `client` answers 200 (`Poll.until`: `limit` seconds and its
    /// minimum of looks, a hang guard); throws, naming the server `what`, when this process exits
    /// first or the wait gives up. How every HTTP test server's start waits for it to serve.
    func waitUntilAnswering(
        _ path: String, through client: HTTPClient, what: String, limit: Double = 60, every interval: Duration = .milliseconds(50)
    ) async throws {
        let answering = try await Poll.until(limit: limit, every: interval) {
            guard isRunning else { throw HarnessError("\(what) exited with \(terminationStatus ?? -1): \(output())") }
            return (try? await client.get(path))?.status == 200
        }
        guard answering else {
            throw HarnessError("\(what) did not answer GET \(path) on port \(client.port) within \(limit) s: \(output())")
        }
    }
}

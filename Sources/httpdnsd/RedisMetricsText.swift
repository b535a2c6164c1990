import HTTPDNSRedis
import HTTPDNSServer

/// The Redis connections' figures for `/metrics`, by purpose (no URL, no password).
enum RedisMetricsText {
    static let up = MetricDescriptor(
        "httpdns_redis_up", .gauge,
        help: "1 while the Redis connection of the purpose is ready, 0 while it is down and reconnecting (answers go on without Redis).",
        labels: ["purpose"])
    static let threadConnections = MetricDescriptor(
        "httpdns_redis_thread_connections", .gauge,
        help:
            "The HTTP threads' own Redis connections of the purpose, by state: up (ready) or down (connecting or reconnecting; that thread's commands go through the purpose's connection meanwhile).",
        labels: ["purpose", "state"])
    static let commandErrors = MetricDescriptor(
        "httpdns_redis_command_errors_total", .counter,
        help:
            "Redis commands that gave no usable reply, by purpose and reason (timeout, unavailable, connection_lost, server, client, overloaded, shutdown).",
        labels: ["purpose", "reason"])
    static let commandDurations = MetricDescriptor(
        "httpdns_redis_command_duration_seconds", .histogram, help: "Round trip of Redis commands that got a reply, by purpose.",
        labels: ["purpose"])
    static let sharedAnswers = MetricDescriptor(
        "httpdns_redis_shared_answers_total", .counter,
        help:
            "Shared answer tier: lookups on a local miss by result (hit, hit_after_wait, miss_locked: this replica asks the upstreams under the fleet's lock, wait_timeout, error) and answers stored.",
        labels: ["result"])

    static func emit(_ metrics: RedisMetrics, into out: inout MetricsEmitter) {
        let purposes = metrics.snapshot.sorted { $0.key < $1.key }
        for descriptor in [up, threadConnections, commandErrors, commandDurations, sharedAnswers] { out.declare(descriptor) }
        for (purpose, figures) in purposes {
            out.sample(up, [purpose], figures.up ? 1 : 0)
            if figures.threadConnections > 0 {
                out.sample(threadConnections, [purpose, "up"], UInt64(clamping: figures.threadConnectionsUp))
                out.sample(threadConnections, [purpose, "down"], UInt64(clamping: figures.threadConnections - figures.threadConnectionsUp))
            }
            for (reason, count) in figures.errors.sorted(by: { $0.key < $1.key }) { out.sample(commandErrors, [purpose, reason], count) }
            out.histogram(commandDurations, [purpose], figures.latency)
        }
        for (result, count) in metrics.answerResults.sorted(by: { $0.key < $1.key }) { out.sample(sharedAnswers, [result], count) }
    }
}

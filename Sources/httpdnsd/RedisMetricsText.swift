import HTTPDNSRedis
import HTTPDNSServer

/// The Redis connections' figures in the Prometheus text format, by purpose (no URL, no password).
enum RedisMetricsText {
    static func render(_ metrics: RedisMetrics) -> String {
        let purposes = metrics.snapshot.sorted { $0.key < $1.key }
        func label(_ purpose: String) -> String { "purpose=\"\(MetricsExposition.escape(purpose))\"" }
        return MetricsExposition.family(
            "httpdns_redis_up", type: "gauge",
            help:
                "1 while the Redis connection of the purpose is ready, 0 while it is down and reconnecting (answers go on without Redis).",
            samples: purposes.map { (labels: label($0.key), value: $0.value.up ? 1 : 0) })
            + MetricsExposition.family(
                "httpdns_redis_command_errors_total", type: "counter",
                help:
                    "Redis commands that gave no usable reply, by purpose and reason (timeout, unavailable, connection_lost, server, client, overloaded, shutdown).",
                samples: purposes.flatMap { purpose in
                    purpose.value.errors.sorted { $0.key < $1.key }.map {
                        (labels: "\(label(purpose.key)),reason=\"\($0.key)\"", value: $0.value)
                    }
                })
            + MetricsExposition.histogram(
                "httpdns_redis_command_duration_seconds", help: "Round trip of Redis commands that got a reply, by purpose.",
                samples: purposes.map { (labels: label($0.key), counts: $0.value.latency) })
            + MetricsExposition.family(
                "httpdns_redis_shared_answers_total", type: "counter",
                help:
                    "Shared answer tier: lookups on a local miss by result (hit, hit_after_wait, miss_locked: this replica asks the upstreams under the fleet's lock, wait_timeout, error) and answers stored.",
                samples: metrics.answerResults.sorted { $0.key < $1.key }.map { (labels: "result=\"\($0.key)\"", value: $0.value) })
    }
}

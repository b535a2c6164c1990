import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

struct MetricsEmitterTests {
    let hits = MetricDescriptor("x_hits_total", .counter, help: "Hits.", labels: ["account", "upstream"])
    let ready = MetricDescriptor("x_ready", .gauge, help: "Ready.")

    @Test func labelValuesEscapeBackslashQuoteAndNewline() {
        var out = MetricsEmitter()
        out.sample(hits, ["a", #"back\slash "quoted""# + "\nnext"], 3)
        #expect(
            out.text == """
                # HELP x_hits_total Hits.
                # TYPE x_hits_total counter
                x_hits_total{account="a",upstream="back\\\\slash \\"quoted\\"\\nnext"} 3

                """)
        #expect(MetricsText(out.text).value("x_hits_total", ["account": "a", "upstream": #"back\slash "quoted""# + "\nnext"]) == 3)
    }

    @Test func helpEscapesBackslashAndNewlineButNotQuotes() {
        var out = MetricsEmitter()
        out.declare(MetricDescriptor("x_odd", .gauge, help: #"a\b "c""# + "\nd"))
        #expect(out.text == "# HELP x_odd a\\\\b \"c\"\\nd\n# TYPE x_odd gauge\n")
    }

    @Test func emptyLabelValuesAreLeftOut() {
        var out = MetricsEmitter()
        out.sample(hits, ["", "up"], 1)
        out.sample(hits, ["", ""], 2)
        #expect(out.text.hasSuffix("x_hits_total{upstream=\"up\"} 1\nx_hits_total 2\n"))
    }

    /// Two sources writing one family, with another family between them, still give one
    /// header and one contiguous block.
    @Test func helpAndTypeOncePerFamilyAcrossSources() {
        var out = MetricsEmitter()
        let first: (inout MetricsEmitter) -> Void = { $0.sample(hits, ["a", "u"], 1) }
        let second: (inout MetricsEmitter) -> Void = {
            $0.sample(ready, [], 1)
            $0.sample(hits, ["b", "u"], 2)
        }
        first(&out)
        second(&out)
        out.declare(hits)
        #expect(
            out.text == """
                # HELP x_hits_total Hits.
                # TYPE x_hits_total counter
                x_hits_total{account="a",upstream="u"} 1
                x_hits_total{account="b",upstream="u"} 2
                # HELP x_ready Ready.
                # TYPE x_ready gauge
                x_ready 1

                """)
        let text = MetricsText(out.text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.families == ["x_hits_total", "x_ready"])
    }

    @Test func aDeclaredFamilyWithoutSamplesKeepsItsHeader() {
        var out = MetricsEmitter()
        out.declare(ready)
        #expect(out.text == "# HELP x_ready Ready.\n# TYPE x_ready gauge\n")
    }

    @Test func histogramsHaveCumulativeBucketsThenSumAndCount() {
        let durations = MetricDescriptor("x_duration_seconds", .histogram, help: "Durations.", labels: ["purpose"])
        var counts = HistogramCounts()
        counts.record(seconds: 0.0002)
        counts.record(seconds: 0.003)
        counts.record(seconds: 20)
        var out = MetricsEmitter()
        out.histogram(durations, ["cache"], counts)
        let lines = out.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 + DurationBuckets.count + 2)
        #expect(lines[0] == "# HELP x_duration_seconds Durations.")
        #expect(lines[1] == "# TYPE x_duration_seconds histogram")
        #expect(lines[2] == #"x_duration_seconds_bucket{purpose="cache",le="0.0001"} 0"#)
        #expect(lines[3] == #"x_duration_seconds_bucket{purpose="cache",le="0.00025"} 1"#)
        #expect(lines[7] == #"x_duration_seconds_bucket{purpose="cache",le="0.005"} 2"#)
        #expect(lines[15] == #"x_duration_seconds_bucket{purpose="cache",le="2.5"} 2"#)
        #expect(lines[17] == #"x_duration_seconds_bucket{purpose="cache",le="10"} 2"#)
        #expect(lines[18] == #"x_duration_seconds_bucket{purpose="cache",le="+Inf"} 3"#)
        #expect(lines[19] == #"x_duration_seconds_sum{purpose="cache"} \#(counts.sumSeconds)"#)
        #expect(lines[20] == #"x_duration_seconds_count{purpose="cache"} 3"#)
        #expect(MetricsText(out.text).problems.isEmpty)
    }

    @Test(arguments: [
        (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"), (1.5, "1.5"), (1234.0, "1234.0"), (1e-05, "1e-05"),
    ])
    func floatsAreWrittenAsPrometheusReadsThem(value: Double, written: String) {
        var out = MetricsEmitter()
        out.sample(ready, [], float: value)
        #expect(out.text.hasSuffix("\nx_ready \(written)\n"))
    }
}

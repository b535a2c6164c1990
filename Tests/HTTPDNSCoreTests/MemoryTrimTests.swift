import Testing

@testable import HTTPDNSCore

@Suite struct MemoryTrimTests {
    /// Several preloads end at about the same time: the one that asks while another's trim runs
    /// must still get a pass after it, or the memory it freed stays in RSS.
    @Test func aRequestDuringARunningTrimGetsOneMorePass() {
        let coalescer = TrimCoalescer()
        var passes = 0
        coalescer.run {
            passes += 1
            if passes == 1 {
                // Two more requests arrive while the first pass runs: one more pass serves both.
                coalescer.run { Issue.record("a request during a trim must not trim itself") }
                coalescer.run { Issue.record("a request during a trim must not trim itself") }
            }
        }
        #expect(passes == 2)
        // Idle again: the next request trims at once, once.
        var later = 0
        coalescer.run { later += 1 }
        #expect(later == 1)
    }
}

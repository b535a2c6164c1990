import Foundation
import HTTPDNSLoop
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct LoopQueueWakeTests {
    private static func makeQueue() -> LoopQueue<Int> {
        LoopQueue<Int>(services: LoopServices(nameThread: { _ in }, report: { _ in }))
    }

    /// The bytes waiting in the wake-up pipe: the wake-ups the loop thread would get.
    private static func pendingWakeUps(_ queue: LoopQueue<Int>) -> Int {
        var count: Int32 = 0
        #expect(ioctl(queue.wake.readDescriptor, UInt(FIONREAD), &count) == 0)
        return Int(count)
    }

    /// A burst queued before the loop thread takes it costs one wake-up, not one per item; once
    /// the thread has taken the queue, the next item wakes it again.
    @Test func aBurstWakesTheLoopOnce() {
        let queue = Self.makeQueue()
        for item in 0..<100 { #expect(queue.enqueue(item)) }
        #expect(Self.pendingWakeUps(queue) == 1)
        queue.wake.drain()
        #expect(Self.pendingWakeUps(queue) == 0)
        #expect(queue.take().items == Array(0..<100))
        #expect(queue.enqueue(100))
        #expect(Self.pendingWakeUps(queue) == 1)
    }

    /// Draining leaves the pipe empty even when more bytes wait than one read takes.
    @Test func drainEmptiesAFullPipe() {
        let queue = Self.makeQueue()
        for _ in 0..<1000 { queue.wake.signal() }
        queue.wake.drain()
        #expect(Self.pendingWakeUps(queue) == 0)
    }

    /// No item is stranded: producers on four threads queue 20 000 items while a loop thread
    /// waits, drains and takes as the loop workers do; every item arrives (a lost wake-up would
    /// leave items queued with the thread asleep until the deadline).
    @Test func noItemIsStrandedUnderContention() async throws {
        let queue = Self.makeQueue()
        let received = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let producers = 4, perProducer = 5000
        queue.startThread(named: "loop-wake-test") {
            let epoll = EpollSet(wake: queue.wake, name: "test")
            var woken = true
            while true {
                let (items, stop) = woken ? queue.take() : ([], false)
                received.add(items.count, ordering: .relaxed)
                if stop { break }
                // No timeout: only a wake-up brings the thread back.
                woken = epoll.wait(milliseconds: -1) { _ in }
                if woken { queue.wake.drain() }
            }
            _ = queue.close()
            epoll.close()
            done.signal()
        }
        DispatchQueue.concurrentPerform(iterations: producers) { producer in
            for item in 0..<perProducer {
                _ = queue.enqueue(producer * perProducer + item)
                if item % 97 == 0 { sched_yield() }
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while received.load(ordering: .relaxed) < producers * perProducer && Date() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(received.load(ordering: .relaxed) == producers * perProducer)
        queue.stopAndWait()
        #expect(done.wait(timeout: .now() + 5) == .success)
    }
}

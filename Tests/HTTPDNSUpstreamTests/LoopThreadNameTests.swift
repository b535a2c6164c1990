import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import Testing

@Suite struct LoopThreadNameTests {
    /// A loop thread (the curl loop's, the c-ares resolver's, Redis's) carries its name in the
    /// system's thread list (`top -H`, gdb), many started at once included.
    @Test func loopThreadsShowTheirNamesToTheSystem() {
        let count = 16
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let queues = (0..<count).map { _ in
            LoopQueue<Int>(services: LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { _ in }))
        }
        for (index, queue) in queues.enumerated() {
            queue.startThread(named: "loop-test-\(index)") {
                started.signal()
                release.wait()
            }
        }
        for _ in 0..<count { started.wait() }
        let names = Set(Self.threadNames())
        for _ in 0..<count { release.signal() }
        let missing = (0..<count).filter { !names.contains("loop-test-\($0)") }
        #expect(missing.isEmpty, "loop threads \(missing) of \(count) kept no name")
    }

    /// The system's names of this process's threads (`/proc/self/task/TID/comm`).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

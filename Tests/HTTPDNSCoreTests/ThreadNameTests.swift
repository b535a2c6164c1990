import Foundation
import HTTPDNSCore
import Testing

@Suite struct ThreadNameTests {
    /// Threads that name themselves first thing, many started at once (some run before `start()`
    /// has returned in the starter), all show their names to the system.
    @Test func threadsThatNameThemselvesAtOnceAreAllNamed() {
        let count = 64
        let named = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for index in 0..<count {
            let thread = Thread {
                ThreadName.setCurrent("name-test-\(index)")
                named.signal()
                release.wait()
            }
            thread.start()
        }
        for _ in 0..<count { named.wait() }
        let names = Set(Self.threadNames())
        for _ in 0..<count { release.signal() }
        let missing = (0..<count).filter { !names.contains("name-test-\($0)") }
        #expect(missing.isEmpty, "threads \(missing) of \(count) kept no name")
    }

    @Test func aLongNameIsCutToLinuxsFifteenBytes() {
        let done = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            ThreadName.setCurrent("name-test-much-too-long")
            done.signal()
            release.wait()
        }
        thread.start()
        done.wait()
        let names = Self.threadNames()
        release.signal()
        #expect(names.contains("name-test-much-"))
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

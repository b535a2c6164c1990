import Dispatch
import Synchronization

let counter = Mutex(0)
DispatchQueue.concurrentPerform(iterations: 8) { _ in
    for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
}
let group = DispatchGroup()
for _ in 0..<4 { DispatchQueue.global().async(group: group) { for _ in 0..<1000 { counter.withLock { $0 += 1 } } } }
group.wait()
print("total", counter.withLock { $0 })

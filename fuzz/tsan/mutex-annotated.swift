import Synchronization
@_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeRawPointer)
@_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeRawPointer)
final class Box: Sendable {
    let state = Mutex<[Int]>([])
    /// withLock, with the lock's happens-before edges told to TSan (the futex is invisible to it).
    func locked<R>(_ body: (inout [Int]) -> R) -> R {
        let token = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        return state.withLock { value in
            tsanAcquire(token)
            defer { tsanRelease(token) }
            return body(&value)
        }
    }
}
@main enum Main { static func main() async {
    let box = Box()
    await withTaskGroup(of: Void.self) { group in
        for i in 0..<8 { group.addTask { for j in 0..<2000 { box.locked { $0.append(i * j) } } } }
    }
    print("count", box.locked { $0.count })
}}

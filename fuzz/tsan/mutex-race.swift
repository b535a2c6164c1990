import Synchronization
final class Box: Sendable { let state = Mutex<[Int]>([]) }
@main enum Main { static func main() async {
    let box = Box()
    await withTaskGroup(of: Void.self) { group in
        for i in 0..<8 { group.addTask { for j in 0..<2000 { box.state.withLock { $0.append(i * j) } } } }
    }
    print("count", box.state.withLock { $0.count })
}}

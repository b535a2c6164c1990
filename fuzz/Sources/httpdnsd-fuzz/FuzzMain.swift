// The libFuzzer binary of `make fuzz` (built with -DFUZZING, ASan and coverage, in its own
// scratch path): `FUZZ_TARGET=<name> httpdnsd-fuzz [libFuzzer options] fuzz/<name>/corpus`.
// Built without -DFUZZING (as `swift build` does) it runs the named target once over each
// file it is given, to replay a finding without the sanitizers.
#if DEBUG
    import Foundation
    import HTTPDNSFuzzEntries

    #if FUZZING
        /// libFuzzer's driver (compiler-rt `FuzzerInterface.h`), linked from `libclang_rt.fuzzer_no_main`.
        @_silgen_name("LLVMFuzzerRunDriver")
        func LLVMFuzzerRunDriver(
            _ argc: UnsafeMutablePointer<CInt>,
            _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
            _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
        ) -> CInt

        nonisolated(unsafe) var selectedTarget: FuzzTarget?
    #endif

    @main
    enum FuzzMain {
        static func main() {
            guard let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
                FileHandle.standardError.write(Data("set FUZZ_TARGET to one of: \(names)\n".utf8))
                exit(2)
            }
            #if FUZZING
                selectedTarget = target
                var argc = CommandLine.argc
                var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
                exit(
                    LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                        selectedTarget!.run(UnsafeRawBufferPointer(start: data, count: size))
                        return 0
                    })
            #else
                for path in CommandLine.arguments.dropFirst() {
                    guard let data = FileManager.default.contents(atPath: path) else {
                        FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                        exit(1)
                    }
                    data.withUnsafeBytes { target.run($0) }
                    print("\(name): \(path) ok")
                }
            #endif
        }
    }
#else
    @main
    enum FuzzMain {
        static func main() { print("httpdnsd-fuzz is built in debug only (make fuzz)") }
    }
#endif

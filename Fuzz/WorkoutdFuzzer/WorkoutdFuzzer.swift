import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif
#if FUZZING
import CLibFuzzer
#endif

/// One fuzzing input: one device's whole byte stream, checked by ``StreamCheck``.
///
/// A broken invariant aborts, which libFuzzer reports as a finding and saves as a crash file.
/// Exported under libFuzzer's conventional name too, which its runtime's own `main` refers to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let stream = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try StreamCheck.check(stream)
    } catch {
        FileHandle.standardError.write(Data("workoutd-fuzz: invariant broken: \(error)\n".utf8))
        abort()
    }
    return 0
}

/// The fuzzer's entry point.
///
/// Built by `scripts/fuzz.sh` (`-sanitize=fuzzer,address -DFUZZING`), it hands control to libFuzzer's
/// driver: SwiftPM executables keep their own `main`, so libFuzzer's is not used. A plain build
/// replays files instead: each argument is a corpus file or folder, every file is checked once, and
/// any failure exits 1, which keeps the target compiling everywhere and replays findings quickly.
@main
enum WorkoutdFuzzer {
    static func main() {
        #if FUZZING
        var argc = Swift.CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = Swift.CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
        #else
        replay(Array(Swift.CommandLine.arguments.dropFirst()))
        #endif
    }

    static func replay(_ paths: [String]) {
        var checked = 0
        var failures = 0
        for path in files(in: paths) {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("workoutd-fuzz: cannot read \(path)\n".utf8))
                failures += 1
                continue
            }
            do {
                let outcome = try StreamCheck.check(Array(data))
                print("\(path): \(outcome.replies.count) replies (\(outcome.expectation.tooLong) line_too_long)")
            } catch {
                FileHandle.standardError.write(Data("\(path): FAILED: \(error)\n".utf8))
                failures += 1
            }
            checked += 1
        }
        print("workoutd-fuzz: \(checked) inputs checked, \(failures) failed")
        exit(failures == 0 && checked > 0 ? 0 : 1)
    }

    private static func files(in paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [path]
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().map { (path as NSString).appendingPathComponent($0) }
        }
    }
}

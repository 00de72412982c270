import Foundation

// `make bench` part strict-json (Benchmarks/parts/strict-json.sh): the cost of decoding the pipelined benchmark's
// command lines with one build of WorkoutProtocol. Compiled together with that module's sources (one module,
// `swiftc -O -wmo`), once with the sources of the current commit and once with those of the commit before strict
// validation, so the two parsers run the same lines in the same way.
//
//   strict-json-decode SECONDS   prints: <ns per line decoding> <ns per line validating every line, or ->
//                                        <ns per line of the mix validating what the decoder validates, or -> ok
#if canImport(Glibc)
import Glibc
#endif

/// The pipelined benchmark's load (Sources/WorkoutdBenchmarks/CommandMix.swift).
///
/// Start/end/share cycles, ids alternating between integers and strings, keys sorted as the simulated wearable writes
/// them.
func commandMix(cycles: Int) -> [[UInt8]] {
    let locations = [#"Gary's Gym"#, "Riverside Park", "Pool — lane 4", "Home", #"Track \"B\""#]
    let services = ["facebook", "instagram", "twitter"]
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
    var lines: [[UInt8]] = []
    var nextID = 1
    func id() -> String {
        defer { nextID += 1 }
        return nextID.isMultiple(of: 2) ? "\(nextID)" : "\"w-\(nextID)\""
    }
    for cycle in 0..<cycles {
        let date = formatter.string(from: Date(timeIntervalSince1970: 1_584_387_913 + Double(cycle) * 3600))
        let location = locations[cycle % locations.count]
        lines.append(
            Array(
                #"{"command_type":"start_workout","date":"\#(date)","id":\#(id()),"intensityLevel":\#(cycle % 10 + 1),"location":"\#(location)"}"#
                    .utf8
            )
        )
        lines.append(Array(#"{"command_type":"end_workout","id":\#(id())}"#.utf8))
        lines.append(
            Array(
                #"{"command_type":"share_workout","id":\#(id()),"service":"\#(services[cycle % services.count])"}"#.utf8
            )
        )
    }
    return lines
}

/// CPU time of this thread, so that other processes on a loaded machine do not count against it.
func cpuNanoseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// Runs `body` over all lines until `seconds` of CPU time have passed; nanoseconds per line.
func nanosecondsPerLine(_ lines: [[UInt8]], seconds: Double, _ body: ([UInt8]) -> Void) -> Double {
    var decoded = 0
    let start = cpuNanoseconds()
    var now = start
    while now - start < seconds * 1e9 {
        for line in lines { body(line) }
        decoded += lines.count
        now = cpuNanoseconds()
    }
    return (now - start) / Double(decoded)
}

let seconds = Swift.CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 2
let lines = commandMix(cycles: 1000)
let decoder = CommandLineDecoder()
var failures = 0
let decoding = nanosecondsPerLine(lines, seconds: seconds) { line in
    if case .failure = decoder.decode(line).command { failures += 1 }
}
// The validator alone (built with -DSTRICT_VALIDATOR, where it exists): the time strict validation adds to a line.
// Measured twice: over every line, and over the lines the decoder gives it (those that are not ASCII flat objects,
// which are JSON by construction: see `FlatJSONObject.isASCII`), the latter per line of the whole mix.
var validating = "-"
var validatingNeeded = "-"
#if STRICT_VALIDATOR
var refused = 0
let validate: ([UInt8]) -> Void = { line in
    if line.withUnsafeBufferPointer(StrictJSONValidator.validate) != nil { refused += 1 }
}
validating = String(format: "%.1f", nanosecondsPerLine(lines, seconds: seconds, validate))
let needed = lines.filter { line in line.withUnsafeBufferPointer { FlatJSONObject(parsing: $0)?.isASCII != true } }
validatingNeeded =
    needed.isEmpty
    ? "0.0"
    : String(
        format: "%.1f",
        nanosecondsPerLine(needed, seconds: seconds, validate) * Double(needed.count) / Double(lines.count)
    )
if refused > 0 { validating = "refused" }
#endif
print(String(format: "%.1f", decoding), validating, validatingNeeded, failures == 0 ? "ok" : "refused")

/// `HotplugBenchmark [--plugs N] [--devices N] [--commands N] [--enforce-floors]`
struct BenchmarkOptions: Sendable {
    var plugs = 200
    var devices = 16
    var commands = 20_000
    var enforceFloors = false

    static func parse(_ arguments: ArraySlice<String>) -> BenchmarkOptions {
        var options = BenchmarkOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--plugs": options.plugs = remaining.popFirst().flatMap { Int($0) }.map { max($0, 1) } ?? options.plugs
            case "--devices":
                options.devices = remaining.popFirst().flatMap { Int($0) }.map { max($0, 1) } ?? options.devices
            case "--commands":
                options.commands = remaining.popFirst().flatMap { Int($0) }.map { max($0, 2) } ?? options.commands
            case "--enforce-floors": options.enforceFloors = true
            default: print("ignoring unknown argument \(argument)")
            }
        }
        return options
    }
}

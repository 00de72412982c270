import ArgumentParser
import ControlProtocol

/// `workoutctl metrics`: the Prometheus text exposition, or one JSON object per sample.
struct MetricsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract:
            "Prometheus metrics: commands by type and outcome, bytes, invalid lines, replays, reconnects, handler latency."
    )

    @OptionGroup var options: GlobalOptions

    func run() {
        let report: MetricsReport = options.connect().result(.metrics)
        if options.json {
            PrometheusSample.parse(report.text).forEach(Output.json)
        } else {
            Output.text(report.text)
        }
    }
}

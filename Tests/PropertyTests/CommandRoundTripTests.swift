import Foundation
import PropertyBased
import Testing
import WorkoutProtocol

@Suite("Command round trip")
struct CommandRoundTripTests {
    @Test("any command encodes and decodes back to itself")
    func anyCommandRoundTrips() async {
        await propertyCheck(count: 500, input: CommandGenerators.command) { command in
            let data = try JSONEncoder().encode(command)
            #expect(try JSONDecoder().decode(Command.self, from: data) == command)
            // The daemon's own path from a line's bytes: same command, nothing to echo.
            #expect(CommandLineDecoder().decode(Array(data)) == DecodedLine(id: nil, command: .success(command)))
        }
    }
}

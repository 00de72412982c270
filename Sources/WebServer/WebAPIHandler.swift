import ControlPlane
import ControlProtocol
import Foundation
import OpenAPIRuntime
import WebAPI
import WorkoutEngine

/// The API's operations, each one call to the control socket's responder.
///
/// The operations are the protocol generated from `openapi.yaml`, giving the same answers `workoutctl` gets, in the
/// same types.
struct WebAPIHandler: APIProtocol {
    let responder: ControlResponder
    let streams: EventStreams
    let configuration: WebConfiguration

    func getStatus(_ input: Operations.getStatus.Input) async throws -> Operations.getStatus.Output {
        do {
            return .ok(.init(body: .json(try await responder.status())))
        } catch {
            return .default(statusCode: 503, Self.error(error))
        }
    }

    func getDevices(_ input: Operations.getDevices.Input) async throws -> Operations.getDevices.Output {
        .ok(.init(body: .json(await responder.devices())))
    }

    func getWorkouts(_ input: Operations.getWorkouts.Input) async throws -> Operations.getWorkouts.Output {
        let query = input.query
        let limit = query.limit ?? configuration.defaultPageSize
        if let problem = Self.problem(
            limit: limit,
            most: configuration.maximumPageSize,
            before: query.before,
            device: query.device
        ) {
            return .badRequest(Self.error("bad_request", problem))
        }
        // One more than the page: whether a next page exists, without a second query.
        let asked = WorkoutQuery(
            startedFrom: query.since,
            startedBefore: query.until,
            beforeID: query.before,
            limit: limit + 1,
            activeOnly: query.active ?? false
        )
        do {
            var workouts = try await responder.workouts(asked, matching: query.device)
            var next: Int64?
            if workouts.count > limit {
                workouts.removeLast(workouts.count - limit)
                next = workouts.last?.id
            }
            return .ok(.init(body: .json(.init(workouts: workouts, next: next))))
        } catch {
            return .default(statusCode: 503, Self.error(error))
        }
    }

    func getWorkoutsCSV(_ input: Operations.getWorkoutsCSV.Input) async throws -> Operations.getWorkoutsCSV.Output {
        let query = input.query
        if let problem = Self.problem(limit: query.limit ?? 1, most: .max, before: query.before, device: query.device) {
            return .badRequest(Self.error("bad_request", problem))
        }
        let pages = CSVPages(
            responder: responder,
            query: WorkoutQuery(
                startedFrom: query.since,
                startedBefore: query.until,
                beforeID: query.before,
                activeOnly: query.active ?? false
            ),
            device: query.device,
            limit: query.limit,
            pageSize: configuration.maximumPageSize
        )
        // The first page is read here, so a store that cannot be read is a 503, not a cut-off file.
        do {
            try await pages.readFirst()
        } catch {
            return .default(statusCode: 503, Self.error(error))
        }
        let chunks = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { try await pages.next().map { $0[...] } }
        let body = HTTPBody(chunks, length: .unknown, iterationBehavior: .single)
        return .ok(
            .init(
                headers: .init(Content_hyphen_Disposition: #"attachment; filename="workouts.csv""#),
                body: .csv(body)
            )
        )
    }

    func getShares(_ input: Operations.getShares.Input) async throws -> Operations.getShares.Output {
        let limit = input.query.limit ?? configuration.defaultPageSize
        guard (1...configuration.maximumPageSize).contains(limit) else {
            return .default(
                statusCode: 400,
                Self.error("bad_request", "limit must be 1 to \(configuration.maximumPageSize); got \(limit)")
            )
        }
        do {
            return .ok(.init(body: .json(try await responder.shares(limit: limit))))
        } catch {
            return .default(statusCode: 503, Self.error(error))
        }
    }

    func getEvents(_ input: Operations.getEvents.Input) async throws -> Operations.getEvents.Output {
        let connection = RequestScope.connection
        do {
            let stream = try streams.makeStream(
                client: connection?.client ?? ClientAddress("unknown"),
                session: RequestScope.session,
                closed: connection?.closed
            )
            return .ok(
                .init(body: .text_event_hyphen_stream(HTTPBody(stream, length: .unknown, iterationBehavior: .single)))
            )
        } catch .tooManyFromAddress(let limit) {
            return .tooManyRequests(
                Self.error("too_many_requests", "This address has \(limit) event streams open already; close one.")
            )
        } catch .tooMany(let limit) {
            return .serviceUnavailable(
                Self.error("unavailable", "The hub has \(limit) event streams open already; try again later.")
            )
        }
    }

    func getMetrics(_ input: Operations.getMetrics.Input) async throws -> Operations.getMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(responder.metrics().text))))
    }

    /// What is wrong with the paging and device parameters a workouts query shares; nil when nothing is.
    private static func problem(limit: Int, most: Int, before: Int64?, device: String?) -> String? {
        if !(1...most).contains(limit) { return "limit must be 1 to \(most); got \(limit)" }
        if let before, before < 1 { return "before must be a workout id (1 or more); got \(before)" }
        if let device, device.isEmpty || device.utf8.count > 256 { return "device must be 1 to 256 bytes" }
        return nil
    }

    private static func error(_ error: ControlError) -> Components.Responses._Error {
        Self.error(error.code.rawValue, error.message)
    }

    private static func error(_ code: String, _ message: String) -> Components.Responses._Error {
        .init(body: .json(.init(error: .init(code: code, message: message))))
    }
}

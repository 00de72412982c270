import WorkoutProtocol

extension TextTable {
    /// Shares as `workoutd shares` and `workoutctl shares` print them; the next attempt only while pending.
    public static func shares(_ shares: [ShareRecord]) -> TextTable {
        var table = TextTable(columns: [
            .init("ID", alignment: .right), .init("WORKOUT", alignment: .right), .init("DEVICE"), .init("SERVICE"),
            .init("STATUS"), .init("ATTEMPTS", alignment: .right), .init("QUEUED"), .init("DELIVERED"),
            .init("NEXT_ATTEMPT"), .init("LAST_ERROR"),
        ])
        for share in shares {
            let device = share.deviceName.map { "\($0) (\(share.device))" } ?? share.device.rawValue
            table.append([
                String(share.id), String(share.workoutID), device, share.service.rawValue,
                share.status.rawValue, String(share.attempts), TableDate.format(share.queuedAt),
                share.deliveredAt.map(TableDate.format) ?? "",
                share.status == .pending ? TableDate.format(share.nextAttemptAt) : "",
                share.lastError ?? "",
            ])
        }
        return table
    }
}

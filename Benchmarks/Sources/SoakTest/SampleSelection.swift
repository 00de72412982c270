/// Which of a run's samples the report shows.
///
/// A table short enough to read, and the hours the drift is taken over.
enum SampleSelection {
    /// At most `count` of `items`, evenly spaced, always the first and the last.
    ///
    /// A table over time keeps its ends, so the run's start and its final figure are always in it (`count` below 2
    /// keeps every item).
    static func evenlySpaced<Item>(_ items: [Item], count: Int) -> [Item] {
        guard items.count > count, count >= 2 else { return items }
        let step = Double(items.count - 1) / Double(count - 1)
        return (0..<count).map { items[Int((Double($0) * step).rounded())] }
    }

    /// The spans a long run's drift is reported over, as pairs of sample indices.
    ///
    /// Hour after hour from the sample at `start` (the settled one), each ending at the first sample an hour or more
    /// after it began; then, when half an hour or more of the run is left after the last of those, the run's last hour,
    /// ending at the final sample. A 7,200 s run settled at 60 s thus has hours 60–3,660 s and 3,600–7,200 s: the two
    /// overlap by the settling minute rather than leave the end of the run out.
    static func hours(elapsed: [Duration], start: Int) -> [(from: Int, to: Int)] {
        guard elapsed.indices.contains(start), let last = elapsed.indices.last else { return [] }
        var spans: [(from: Int, to: Int)] = []
        var from = start
        for index in elapsed.indices where index > from && elapsed[index] - elapsed[from] >= .seconds(3600) {
            spans.append((from, index))
            from = index
        }
        guard !spans.isEmpty, last > from, elapsed[last] - elapsed[from] >= .seconds(1800) else { return spans }
        let hourBefore = elapsed.lastIndex { $0 <= elapsed[last] - .seconds(3600) } ?? start
        spans.append((max(hourBefore, start), last))
        return spans
    }
}

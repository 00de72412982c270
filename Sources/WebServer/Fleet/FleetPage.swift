import Foundation

/// The fleet page at `/`, rendered on the server.
///
/// Every hub, the totals, and the workouts across hubs with their filter and CSV link.
///
/// No script: the filter is a plain GET form, so the page works as it is on a phone and without JavaScript. Every
/// string from the database goes through ``HTMLText``; on a narrow screen the tables stack as the hub page's do.
struct FleetPage {
    var hubs: [FleetHub]
    var workouts: [FleetWorkout]
    var filter: FleetWorkoutFilter
    var now: Date
    var requiresLogin: Bool
    var title: String
    var timeZone: TimeZone = .current

    func render() -> String {
        var html = PageLayout.head(title: title, timeZone: timeZone.identifier, script: false)
        html += """
            <header><div><h1>\(e(title))</h1><p class="meta">\(hubs.count) hubs · as of \(time(now))</p></div>\(Self.logout(requiresLogin))</header>
            <main>
            \(summary())
            \(hubSection())
            \(workoutSection())
            </main>
            """
        return html + PageLayout.tail
    }

    /// A page that says what went wrong: the database cannot be read, or a filter is malformed.
    static func problemPage(_ message: String, configuration: WebConfiguration) -> String {
        var html = PageLayout.head(title: configuration.title, script: false)
        html += """
            <header><div><h1>\(HTMLText.escaped(configuration.title))</h1></div>\(logout(configuration.requiresLogin))</header>
            <main><section><p class="notice bad" id="problem">\(HTMLText.escaped(message))</p><p><a href="/">Back to the fleet</a></p></section></main>
            """
        return html + PageLayout.tail
    }

    private static func logout(_ requiresLogin: Bool) -> String {
        requiresLogin
            ? #"<form method="post" action="/logout" class="logout"><button type="submit" id="logout">Log out</button></form>"#
            : ""
    }

    private func summary() -> String {
        let online = hubs.filter(\.online).count
        let cards: [(String, String, String)] = [
            ("hubs", "Hubs", "\(hubs.count)"),
            ("online", "Online", "\(online)"),
            ("offline", "Offline", "\(hubs.count - online)"),
            ("wearables", "Wearables connected", "\(hubs.reduce(0) { $0 + ($1.wearablesConnected ?? 0) })"),
            ("active", "Active workouts", "\(hubs.reduce(0) { $0 + ($1.activeWorkouts ?? 0) })"),
            ("today", "Workouts today", "\(hubs.reduce(0) { $0 + $1.workoutsToday })"),
            ("backlog", "Backlog", "\(hubs.reduce(0) { $0 + ($1.backlog ?? 0) })"),
        ]
        var html = #"<section id="summary" class="cards" aria-label="Totals">"#
        for (key, label, value) in cards {
            html +=
                #"<div class="card"><span class="label">\#(label)</span><span class="value" data-summary="\#(key)">\#(value)</span></div>"#
        }
        return html + "</section>"
    }

    private func hubSection() -> String {
        var html = #"""
            <section id="hubs"><h2>Hubs</h2><table class="stack"><thead><tr><th>Hub</th><th>State</th><th>Version</th><th>Last seen</th><th class="num">Wearables</th><th class="num">Backlog</th><th class="num">Today</th><th>Last error</th></tr></thead><tbody id="hub-rows">
            """#
        if hubs.isEmpty {
            html += #"<tr><td colspan="8" class="empty">No hub has reported to this database yet.</td></tr>"#
        }
        for hub in hubs {
            let name =
                hub.name.map { "<strong>\(e($0))</strong> <span class=\"serial\">\(e(hub.hubID))</span>" }
                ?? "<strong>\(e(hub.hubID))</strong>"
            let state = hub.online ? "online" : "offline"
            let version = [hub.version, hub.architecture].compactMap { $0 }.joined(separator: " · ")
            html +=
                "<tr data-hub=\"\(e(hub.hubID))\" data-online=\"\(hub.online)\"><td data-label=\"Hub\"><a href=\"/?hub=\(query(hub.hubID))\">\(name)</a></td>"
                + "<td data-label=\"State\" class=\"state \(hub.online ? "ok" : "bad")\">\(state)</td>"
                + "<td data-label=\"Version\">\(e(version.isEmpty ? "—" : version))</td>"
                + "<td data-label=\"Last seen\">\(hub.lastSeen.map(time) ?? "never")</td>"
                + "<td data-label=\"Wearables\" class=\"num\">\(number(hub.wearablesConnected))</td>"
                + "<td data-label=\"Backlog\" class=\"num\">\(number(hub.backlog))</td>"
                + "<td data-label=\"Today\" class=\"num\">\(hub.workoutsToday)</td>"
                + "<td data-label=\"Last error\" class=\"text\">\(e(hub.lastError ?? ""))</td></tr>"
        }
        return html + "</tbody></table></section>"
    }

    private func workoutSection() -> String {
        let day = Date.ISO8601FormatStyle(timeZone: timeZone).year().month().day()
        let since = filter.since.map { $0.formatted(day) } ?? ""
        // `until` is exclusive; the form shows the last day it includes.
        let until = filter.until.map { $0.addingTimeInterval(-1).formatted(day) } ?? ""
        var options = #"<option value="">All hubs</option>"#
        for hub in hubs {
            let selected = hub.hubID == filter.hub ? " selected" : ""
            options += "<option value=\"\(e(hub.hubID))\"\(selected)>\(e(hub.name ?? hub.hubID))</option>"
        }
        let csvQuery = filter.queryString
        var html = """
            <section id="workouts"><h2>Workouts</h2>
            <form id="workout-filter" class="filters" method="get" action="/"><label>Hub <select name="hub" id="filter-hub">\(options)</select></label>
            <label>From <input type="date" name="since" id="filter-since" value="\(e(since))"></label><label>To <input type="date" name="until" id="filter-until" value="\(e(until))"></label>
            <button type="submit">Filter</button><a id="workouts-csv" class="button" href="/api/workouts.csv\(csvQuery.isEmpty ? "" : "?" + e(csvQuery))" download="fleet-workouts.csv">Download CSV</a></form>
            <table id="workout-table" class="stack"><thead><tr><th>Hub</th><th class="num">#</th><th>Wearable</th><th>Location</th><th class="num">Level</th><th>Started</th><th class="num">Duration</th></tr></thead><tbody id="workout-rows">
            """
        if workouts.isEmpty { html += #"<tr><td colspan="7" class="empty">No workouts match.</td></tr>"# }
        let names = Dictionary(hubs.map { ($0.hubID, $0.name) }, uniquingKeysWith: { first, _ in first })
        for workout in workouts {
            let hubName = (names[workout.hubID] ?? nil) ?? workout.hubID
            let duration =
                workout.durationSeconds.map { PageTime.spoken(seconds: $0) }
                ?? "running \(PageTime.spoken(seconds: now.timeIntervalSince(workout.startedAt)))"
            html +=
                "<tr><td data-label=\"Hub\">\(e(hubName))</td><td data-label=\"#\" class=\"num\">\(workout.workoutID)</td>"
                + "<td data-label=\"Wearable\">\(e(workout.deviceID))</td><td data-label=\"Location\" class=\"text\">\(e(workout.location))</td>"
                + "<td data-label=\"Level\" class=\"num\">\(workout.intensityLevel)</td><td data-label=\"Started\">\(time(workout.startedAt))</td>"
                + "<td data-label=\"Duration\" class=\"num\">\(e(duration))</td></tr>"
        }
        html += "</tbody></table>"
        if workouts.count == filter.limit {
            html +=
                #"<p class="meta">The newest \#(filter.limit) shown; narrow the filter, or download the CSV for all.</p>"#
        }
        return html + "</section>"
    }

    private func number(_ value: Int?) -> String { value.map(String.init) ?? "—" }

    private func query(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#")
        return e(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
    }

    private func e(_ text: String) -> String { HTMLText.escaped(text) }

    private func time(_ date: Date) -> String {
        "<time datetime=\"\(date.ISO8601Format())\">\(PageTime.format(date, timeZone: timeZone))</time>"
    }
}

import ControlProtocol
import Foundation
import WorkoutProtocol

/// The page at `/`: the hub's status rendered on the server, readable without JavaScript. `app.js` then keeps
/// every part of it live from the event stream, and adds the feed, the charts and the workouts table's sorting,
/// filtering and paging (the parts marked `js-only`).
struct StatusPage {
    var status: StatusReport
    var devices: DeviceList
    /// Every workout running now, newest first: the Active list, its card and the Wearables column.
    var activeWorkouts: [WorkoutRecord]
    var recentWorkouts: [WorkoutRecord]
    var shares: [ShareRecord]
    var workoutsToday: Int
    var workoutsThisWeek: Int
    var now: Date
    /// On a network address: the page offers to log out.
    var requiresLogin: Bool
    var timeZone: TimeZone = .current

    func render() -> String {
        var html = PageLayout.head(title: "workoutd", timeZone: timeZone.identifier)
        let logout =
            requiresLogin
            ? #"<form method="post" action="/logout" class="logout"><button type="submit" id="logout">Log out</button></form>"#
            : ""
        html += """
            <header><div><h1>workoutd</h1><p class="meta">version \(e(status.version)) · up since \(time(status.startedAt))</p></div>\(logout)</header>
            <main>
            <noscript><p class="notice">Without JavaScript this page shows the status as it was when loaded (reload for news); the live feed, the charts and sorting need JavaScript.</p></noscript>
            \(summary())
            \(activeSection())
            \(deviceSection())
            \(chartsSection())
            \(feedSection())
            \(replicationSection())
            \(workoutsSection())
            \(sharesSection())
            </main>
            """
        html += PageLayout.tail
        return html
    }

    private func summary() -> String {
        let connected = devices.devices.filter(\.connected).count
        var cards: [(String, String, String)] = [
            ("active", "Active workouts", "\(activeWorkouts.count)"),
            ("today", "Workouts today", "\(workoutsToday)"),
            ("week", "This week", "\(workoutsThisWeek)"),
            ("devices", "Wearables connected", "\(connected) / \(devices.devices.count)"),
            ("shares", "Shares waiting", "\(status.queuedShares)"),
            ("errors", "Errors", "\(status.counters.errors)"),
        ]
        if let replication = status.replication { cards.append(("lag", "Replication lag", "\(replication.pending)")) }
        var html = #"<section id="summary" class="cards" aria-label="Summary">"#
        for (key, label, value) in cards {
            html +=
                #"<div class="card"><span class="label">\#(label)</span><span class="value" data-summary="\#(key)">\#(e(value))</span></div>"#
        }
        if !status.pendingRestart.isEmpty {
            html += #"<p class="notice">Pending restart: \#(e(status.pendingRestart.joined(separator: ", ")))</p>"#
        }
        return html + "</section>"
    }

    /// A device as people know it: its name in bold when it has one, its serial beside it.
    private func wearable(_ identity: String, name: String?) -> String {
        guard let name else { return #"<span class="wearable">\#(e(identity))</span>"# }
        return
            #"<span class="wearable"><strong>\#(e(name))</strong> <span class="serial">\#(e(identity))</span></span>"#
    }

    private func nameOf(_ identity: String) -> String? {
        devices.devices.first { $0.identity == identity }?.name
            ?? devices.unknown?.first { $0.identity == identity }?.name
    }

    private func running(_ workout: WorkoutRecord) -> String {
        let started = Self.iso(workout.startedAt)
        return
            #"<span class="running" data-started="\#(started)">running \#(PageTime.spoken(seconds: now.timeIntervalSince(workout.startedAt)))</span>"#
    }

    private func activeSection() -> String {
        var html = #"<section id="active"><h2>Active workouts</h2><ul id="active-list" class="active-list">"#
        if activeWorkouts.isEmpty { html += #"<li class="empty">None.</li>"# }
        for workout in activeWorkouts {
            html +=
                "<li data-workout=\"\(workout.id)\">\(wearable(workout.device.rawValue, name: workout.deviceName ?? nameOf(workout.device.rawValue)))"
                + "<span class=\"what\">\(e(workout.location)) · level \(workout.intensityLevel)</span>\(running(workout))</li>"
        }
        return html + "</ul></section>"
    }

    private func deviceSection() -> String {
        var html =
            #"<section id="devices"><h2>Wearables</h2><table class="stack"><thead><tr><th>Wearable</th><th>State</th><th>Active workout</th><th>Last command</th><th class="num">Commands</th><th class="num">Errors</th></tr></thead><tbody id="device-rows">"#
        if devices.devices.isEmpty {
            html += #"<tr><td colspan="6" class="empty">No wearable attached.</td></tr>"#
        }
        for device in devices.devices {
            let state: String
            let stateClass: String
            if let refused = device.refused {
                state = "refused: \(refused)"
                stateClass = "bad"
            } else if device.connected {
                state = "connected"
                stateClass = "ok"
            } else {
                state = "waiting" + (device.waitingReason.map { ": \($0)" } ?? "")
                stateClass = "warn"
            }
            let active = activeWorkouts.first { $0.device.rawValue == device.identity }
            let activeText =
                active.map { "\(e($0.location)) · level \($0.intensityLevel) · \(running($0))" } ?? "—"
            let node = device.node == device.identity ? "" : "<span class=\"node\">\(e(device.node))</span>"
            html +=
                "<tr data-device=\"\(e(device.identity))\"><td data-label=\"Wearable\">\(wearable(device.identity, name: device.name))\(node)</td>"
                + "<td data-label=\"State\" class=\"\(stateClass)\">\(e(state))</td><td data-label=\"Active workout\" class=\"active-cell\">\(activeText)</td>"
                + "<td data-label=\"Last command\" class=\"last-command\">—</td>"
                + "<td data-label=\"Commands\" class=\"num\">\(device.commands)</td><td data-label=\"Errors\" class=\"num\">\(device.errors)</td></tr>"
        }
        html += "</tbody></table>"
        if let unknown = devices.unknown, !unknown.isEmpty {
            html += "<h3>Refused, not enrolled</h3><ul id=\"unknown-list\">"
            for device in unknown {
                html +=
                    "<li>\(wearable(device.identity, name: device.name)) on \(e(device.node)), seen \(device.sightings)× (last \(time(device.lastSeen)))</li>"
            }
            html += "</ul>"
        }
        return html + "</section>"
    }

    private func replicationSection() -> String {
        var html = #"<section id="replication"><h2>Replication</h2>"#
        guard let replication = status.replication else {
            return html + #"<p class="empty">Off (replication.postgres_url is not set).</p></section>"#
        }
        html +=
            "<dl><dt>State</dt><dd class=\"\(replication.state == "connected" ? "ok" : "bad")\">\(e(replication.state)) since \(time(replication.since))</dd>"
        html += "<dt>Lag</dt><dd>\(replication.pending) changes not yet shipped</dd>"
        html += "<dt>Last shipped</dt><dd>\(replication.lastShippedAt.map(time) ?? "never")</dd>"
        html +=
            "<dt>Server</dt><dd>\(e(replication.server)) (\(replication.connections)/\(replication.maxConnections) connections)</dd>"
        html +=
            "<dt>Host in use</dt><dd id=\"central-host\">\(replication.centralHost.map { e($0) } ?? "none (not connected)")</dd>"
        if let error = replication.lastError { html += "<dt>Last error</dt><dd class=\"bad\">\(e(error))</dd>" }
        return html + "</dl></section>"
    }

    private func chartsSection() -> String {
        #"""
        <section id="charts" class="js-only"><h2>Charts</h2><div class="charts">
        <figure><figcaption id="chart-daily-caption">Workouts per day, last 30 days</figcaption><div id="chart-daily" class="chart"></div></figure>
        <figure><figcaption>Commands per second, last 5 minutes</figcaption><div id="chart-rate" class="chart"></div></figure>
        </div></section>
        """#
    }

    private func feedSection() -> String {
        #"<section id="feed" class="js-only"><h2>Live feed <span id="feed-state" class="meta">connecting…</span></h2><ol id="feed-list" class="feed"></ol></section>"#
    }

    private func workoutsSection() -> String {
        var html = #"""
            <section id="workouts"><h2>Workouts</h2>
            <form id="workout-filter" class="filters js-only"><label>Wearable <input name="device" id="filter-device" autocomplete="off" placeholder="name, serial or node"></label>
            <label>From <input type="date" name="since" id="filter-since"></label><label>To <input type="date" name="until" id="filter-until"></label>
            <button type="submit">Filter</button><a id="workouts-csv" class="button" href="/api/workouts.csv" download="workouts.csv">Download CSV</a></form>
            <table id="workout-table" class="stack"><thead><tr><th data-sort="id" class="num">#</th><th data-sort="device">Wearable</th><th data-sort="location">Location</th><th data-sort="intensityLevel" class="num">Level</th><th data-sort="startedAt">Started</th><th data-sort="durationSeconds" class="num">Duration</th></tr></thead><tbody id="workout-rows">
            """#
        if recentWorkouts.isEmpty { html += #"<tr><td colspan="6" class="empty">No workouts stored.</td></tr>"# }
        for workout in recentWorkouts {
            let duration = workout.durationSeconds.map { PageTime.spoken(seconds: $0) } ?? running(workout)
            html +=
                "<tr><td data-label=\"#\" class=\"num id\">\(workout.id)</td><td data-label=\"Wearable\">\(wearable(workout.device.rawValue, name: workout.deviceName))</td>"
                + "<td data-label=\"Location\" class=\"text\">\(e(workout.location))</td><td data-label=\"Level\" class=\"num\">\(workout.intensityLevel)</td>"
                + "<td data-label=\"Started\">\(time(workout.startedAt))</td><td data-label=\"Duration\" class=\"num\">\(duration)</td></tr>"
        }
        return html
            + #"</tbody></table><p class="js-only"><button id="workouts-more" type="button" hidden>More</button></p></section>"#
    }

    private func sharesSection() -> String {
        var html =
            #"<section id="shares"><h2>Share delivery</h2><table class="stack"><thead><tr><th class="num">#</th><th>Wearable</th><th>Service</th><th>State</th><th class="num">Attempts</th><th>Last error</th></tr></thead><tbody id="share-rows">"#
        if shares.isEmpty { html += #"<tr><td colspan="6" class="empty">No shares queued.</td></tr>"# }
        for share in shares {
            let state = share.status == .delivered ? "delivered \(share.deliveredAt.map(time) ?? "")" : "pending"
            html +=
                "<tr><td data-label=\"#\" class=\"num id\">\(share.id)</td><td data-label=\"Wearable\">\(wearable(share.device.rawValue, name: share.deviceName))</td><td data-label=\"Service\">\(e(share.service.rawValue))</td>"
                + "<td data-label=\"State\" class=\"\(share.status == .delivered ? "ok" : "warn")\">\(state)</td><td data-label=\"Attempts\" class=\"num\">\(share.attempts)</td><td data-label=\"Last error\" class=\"text\">\(e(share.lastError ?? ""))</td></tr>"
        }
        return html + "</tbody></table></section>"
    }

    private func e(_ text: String) -> String { HTMLText.escaped(text) }

    private func time(_ date: Date) -> String {
        "<time datetime=\"\(Self.iso(date))\">\(PageTime.format(date, timeZone: timeZone))</time>"
    }

    static func iso(_ date: Date) -> String {
        date.ISO8601Format()
    }
}

/// The page's frame.
///
/// The head that loads the stylesheet and script (files of this server: CSP `'self'`), and the hub's time zone, in
/// which the script shows times.
enum PageLayout {
    static func head(title: String, timeZone: String? = nil, script: Bool = true) -> String {
        let zone = timeZone.map { " data-time-zone=\"\(HTMLText.escaped($0))\"" } ?? ""
        let scriptTag = script ? #"<script src="/assets/app.js" defer></script>"# : ""
        return """
            <!doctype html>
            <html lang="en"\(zone)><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTMLText.escaped(title))</title><link rel="stylesheet" href="/assets/style.css">\(scriptTag)</head>
            <body>

            """
    }

    static let tail = "\n</body></html>\n"
}

import ControlProtocol
import Foundation
import WorkoutProtocol

/// The page at `/`: the hub's status rendered on the server, readable without JavaScript. `app.js` then adds
/// the live feed, the charts and the sortable, filterable workouts table (the parts marked `js-only`).
struct StatusPage {
    var status: StatusReport
    var devices: DeviceList
    /// The active workout of each device that has one, by identity.
    var activeWorkouts: [String: WorkoutRecord]
    var recentWorkouts: [WorkoutRecord]
    var shares: [ShareRecord]

    func render() -> String {
        var html = PageLayout.head(title: "workoutd")
        html += """
            <header><h1>workoutd</h1><p class="meta">version \(e(status.version)) · pid \(status.pid) · up since \(time(status.startedAt))</p></header>
            <main>
            <noscript><p class="notice">Without JavaScript this page shows the status as it was when loaded (reload for news); the live feed, the charts and sorting need JavaScript.</p></noscript>
            \(summary())
            \(deviceSection())
            \(activeSection())
            \(replicationSection())
            \(chartsSection())
            \(feedSection())
            \(workoutsSection())
            \(sharesSection())
            </main>
            """
        html += PageLayout.tail
        return html
    }

    private func summary() -> String {
        let counters = status.counters
        let lag = status.replication.map { "\($0.pending)" } ?? "off"
        let cards: [(String, String, String)] = [
            ("devices", "Wearables connected", "\(status.devicesConnected) / \(status.devicesAttached)"),
            ("active", "Active workouts", "\(status.activeWorkouts)"),
            ("commands", "Commands", "\(counters.commands)"),
            ("errors", "Errors", "\(counters.errors)"),
            ("shares", "Shares waiting", "\(status.queuedShares)"),
            ("lag", "Replication lag", lag),
        ]
        var html = #"<section id="summary" class="cards">"#
        for (key, label, value) in cards {
            html +=
                #"<div class="card"><span class="label">\#(label)</span><span class="value" data-summary="\#(key)">\#(e(value))</span></div>"#
        }
        if !status.pendingRestart.isEmpty {
            html += #"<p class="notice">Pending restart: \#(e(status.pendingRestart.joined(separator: ", ")))</p>"#
        }
        return html + "</section>"
    }

    private func deviceSection() -> String {
        var html =
            #"<section id="devices"><h2>Wearables</h2><div class="scroll"><table><thead><tr><th>Device</th><th>Node</th><th>State</th><th>Active workout</th><th>Last command</th><th class="num">Commands</th><th class="num">Errors</th></tr></thead><tbody id="device-rows">"#
        if devices.devices.isEmpty {
            html += #"<tr><td colspan="7" class="empty">No wearable attached.</td></tr>"#
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
            let active =
                activeWorkouts[device.identity].map {
                    "\($0.location) (level \($0.intensityLevel)) since \(Self.format($0.startedAt))"
                } ?? "—"
            html +=
                "<tr data-device=\"\(e(device.identity))\"><td>\(e(device.identity))</td><td>\(e(device.node))</td>"
                + "<td class=\"\(stateClass) text\">\(e(state))</td><td class=\"text\">\(e(active))</td><td class=\"last-command\">—</td>"
                + "<td class=\"num\">\(device.commands)</td><td class=\"num\">\(device.errors)</td></tr>"
        }
        html +=
            #"</tbody></table></div><p id="devices-changed" class="notice" hidden>Wearables changed since this page was loaded: reload it to see them.</p>"#
        if let unknown = devices.unknown, !unknown.isEmpty {
            html += "<h3>Refused, not enrolled</h3><ul>"
            for device in unknown {
                html +=
                    "<li>\(e(device.identity)) on \(e(device.node)), seen \(device.sightings)× (last \(time(device.lastSeen)))</li>"
            }
            html += "</ul>"
        }
        return html + "</section>"
    }

    private func activeSection() -> String {
        var html = #"<section id="active"><h2>Active workouts</h2>"#
        guard !activeWorkouts.isEmpty else { return html + #"<p class="empty">None.</p></section>"# }
        html += "<ul>"
        for workout in activeWorkouts.values.sorted(by: { $0.id < $1.id }) {
            html +=
                "<li><strong>\(e(workout.device.rawValue))</strong>: \(e(workout.location)), level \(workout.intensityLevel), since \(time(workout.startedAt))</li>"
        }
        return html + "</ul></section>"
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
        if let error = replication.lastError { html += "<dt>Last error</dt><dd class=\"bad\">\(e(error))</dd>" }
        return html + "</dl></section>"
    }

    private func chartsSection() -> String {
        #"""
        <section id="charts" class="js-only"><h2>Charts</h2><div class="charts">
        <figure><figcaption>Workouts per day, last 30 days</figcaption><div id="chart-daily" class="chart"></div></figure>
        <figure><figcaption>Commands per second, last minutes</figcaption><div id="chart-rate" class="chart"></div></figure>
        </div></section>
        """#
    }

    private func feedSection() -> String {
        #"<section id="feed" class="js-only"><h2>Live feed <span id="feed-state" class="meta">connecting…</span></h2><ol id="feed-list" class="feed"></ol></section>"#
    }

    private func workoutsSection() -> String {
        var html = #"""
            <section id="workouts"><h2>Workouts</h2>
            <form id="workout-filter" class="filters js-only"><label>Device <input name="device" id="filter-device" autocomplete="off"></label>
            <label>From <input type="date" name="since" id="filter-since"></label><label>To <input type="date" name="until" id="filter-until"></label>
            <button type="submit">Filter</button></form>
            <div class="scroll"><table id="workout-table"><thead><tr><th data-sort="id" class="num">#</th><th data-sort="device">Device</th><th data-sort="location">Location</th><th data-sort="intensityLevel" class="num">Level</th><th data-sort="startedAt">Started</th><th data-sort="durationSeconds" class="num">Minutes</th></tr></thead><tbody id="workout-rows">
            """#
        if recentWorkouts.isEmpty { html += #"<tr><td colspan="6" class="empty">No workouts stored.</td></tr>"# }
        for workout in recentWorkouts {
            let minutes = workout.durationSeconds.map { String(format: "%.1f", $0 / 60) } ?? "active"
            html +=
                "<tr><td class=\"num\">\(workout.id)</td><td>\(e(workout.device.rawValue))</td><td class=\"text\">\(e(workout.location))</td>"
                + "<td class=\"num\">\(workout.intensityLevel)</td><td>\(time(workout.startedAt))</td><td class=\"num\">\(minutes)</td></tr>"
        }
        return html
            + #"</tbody></table></div><p class="js-only"><button id="workouts-more" type="button" hidden>More</button></p></section>"#
    }

    private func sharesSection() -> String {
        var html =
            #"<section id="shares"><h2>Share delivery</h2><div class="scroll"><table><thead><tr><th class="num">#</th><th>Device</th><th>Service</th><th>State</th><th class="num">Attempts</th><th>Last error</th></tr></thead><tbody id="share-rows">"#
        if shares.isEmpty { html += #"<tr><td colspan="6" class="empty">No shares queued.</td></tr>"# }
        for share in shares {
            let state = share.status == .delivered ? "delivered \(share.deliveredAt.map(Self.format) ?? "")" : "pending"
            html +=
                "<tr><td class=\"num\">\(share.id)</td><td>\(e(share.device.rawValue))</td><td>\(e(share.service.rawValue))</td>"
                + "<td class=\"\(share.status == .delivered ? "ok" : "warn")\">\(e(state))</td><td class=\"num\">\(share.attempts)</td><td class=\"text\">\(e(share.lastError ?? ""))</td></tr>"
        }
        return html + "</tbody></table></div></section>"
    }

    private func e(_ text: String) -> String { HTMLText.escaped(text) }

    private func time(_ date: Date) -> String {
        "<time datetime=\"\(Self.format(date))\">\(Self.format(date))</time>"
    }

    static func format(_ date: Date) -> String {
        date.ISO8601Format()
    }
}

/// The page's frame: the head that loads the stylesheet and script.
///
/// Both are files of this server (CSP `'self'`).
enum PageLayout {
    static func head(title: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTMLText.escaped(title))</title><link rel="stylesheet" href="/assets/style.css"><script src="/assets/app.js" defer></script></head>
        <body>

        """
    }

    static let tail = "\n</body></html>\n"
}

/// `/assets/app.js`: the live parts of the page. A file of its own, so the Content-Security-Policy allows no
/// inline script at all. Device strings only ever reach the page as text nodes (`textContent`), never as markup.
enum PageScript {
    static let source = ##"""
        "use strict";
        (function () {
          document.documentElement.classList.add("js");
          var $ = function (id) { return document.getElementById(id); };
          var svgNS = "http://www.w3.org/2000/svg";

          function el(tag, text, cls) {
            var node = document.createElement(tag);
            if (text !== undefined && text !== null) node.textContent = String(text);
            if (cls) node.className = cls;
            return node;
          }
          function svg(tag, attrs) {
            var node = document.createElementNS(svgNS, tag);
            for (var k in attrs) node.setAttribute(k, String(attrs[k]));
            return node;
          }
          function getJSON(url) {
            return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
              if (r.status === 401) { window.location.assign("/login"); throw new Error("login needed"); }
              if (!r.ok) throw new Error(url + ": HTTP " + r.status);
              return r.json();
            });
          }
          function shortTime(iso) { return iso ? iso.replace("T", " ").replace("Z", "") : ""; }

          // ---- live feed -------------------------------------------------------------------------------
          var feed = $("feed-list"), feedState = $("feed-state");
          var maxFeed = 200;
          function describe(ev) {
            switch (ev.type) {
              case "command_received": return (ev.command_type || "invalid line") + (ev.id !== undefined ? " #" + ev.id : "") + " (" + ev.origin + ")";
              case "reply_sent":
                var r = ev.reply || {};
                return "→ " + (r.status || "?") + (r.error ? " " + r.error.code : "") + (r.id !== undefined && r.id !== null ? " #" + r.id : "");
              case "workout_started": case "workout_ended": return ev.workout ? ev.workout.location + " (level " + ev.workout.intensityLevel + ")" : "";
              case "share_queued": case "share_delivered": return ev.share ? ev.share.service + " share " + ev.share.id : "";
              case "share_failed": return (ev.share ? ev.share.service + " share " + ev.share.id + ": " : "") + (ev.error || "");
              case "device_added": case "device_removed": return ev.node || "";
              case "storage_failed": return ev.reason || "";
              default: return "";
            }
          }
          function deviceRow(device) {
            var rows = document.querySelectorAll("#device-rows tr");
            for (var i = 0; i < rows.length; i++) if (rows[i].dataset.device === device) return rows[i];
            return null;
          }
          function addFeed(ev) {
            var li = el("li", null, "ev ev-" + ev.type);
            li.appendChild(el("time", shortTime(ev.time).slice(11, 19)));
            li.appendChild(el("span", ev.device, "dev"));
            li.appendChild(el("span", ev.type.replace(/_/g, " "), "type"));
            li.appendChild(el("span", describe(ev), "detail"));
            feed.insertBefore(li, feed.firstChild);
            while (feed.childNodes.length > maxFeed) feed.removeChild(feed.lastChild);
            if (ev.type === "command_received") {
              var row = deviceRow(ev.device);
              var cell = row && row.querySelector(".last-command");
              if (cell) cell.textContent = (ev.command_type || "invalid line") + " at " + shortTime(ev.time).slice(11, 19);
            }
            if (ev.type === "device_added" || ev.type === "device_removed" || ev.type === "workout_started" || ev.type === "workout_ended") refreshSoon();
          }
          if (feed && window.EventSource) {
            var source = new EventSource("/api/events");
            source.onopen = function () { feedState.textContent = "live"; feedState.className = "meta ok"; };
            source.onerror = function () { feedState.textContent = "reconnecting…"; feedState.className = "meta warn"; };
            source.onmessage = function (message) {
              try { var line = JSON.parse(message.data); if (line && line.event) addFeed(line.event); } catch (e) { /* not an event */ }
            };
          }

          // ---- status refresh --------------------------------------------------------------------------
          var refreshTimer = null;
          function refreshSoon() { if (!refreshTimer) refreshTimer = setTimeout(function () { refreshTimer = null; refreshStatus(); }, 500); }
          function setSummary(key, value) {
            var node = document.querySelector('[data-summary="' + key + '"]');
            if (node) node.textContent = String(value);
          }
          var lastSample = null, rates = [];
          function refreshStatus() {
            return getJSON("/api/status").then(function (s) {
              setSummary("devices", s.devicesConnected + " / " + s.devicesAttached);
              setSummary("active", s.activeWorkouts);
              setSummary("commands", s.counters.commands);
              setSummary("errors", s.counters.errors);
              setSummary("shares", s.queuedShares);
              setSummary("lag", s.replication ? s.replication.pending : "off");
              var now = performance.now();
              if (lastSample) {
                var seconds = (now - lastSample.at) / 1000;
                if (seconds > 0) rates.push({ at: Date.now(), rate: Math.max(0, (s.counters.commands - lastSample.commands) / seconds) });
                while (rates.length > 150) rates.shift();
                drawRate();
              }
              lastSample = { at: now, commands: s.counters.commands };
              return getJSON("/api/devices");
            }).then(function (list) {
              if (!list) return;
              list.devices.forEach(function (device) {
                var row = deviceRow(device.identity);
                if (!row) { refreshNeeded = true; return; }
                var cells = row.querySelectorAll("td");
                if (cells.length < 7) return;
                cells[2].textContent = device.refused ? "refused: " + device.refused : device.connected ? "connected" : "waiting" + (device.waitingReason ? ": " + device.waitingReason : "");
                cells[2].className = (device.refused ? "bad" : device.connected ? "ok" : "warn") + " text";
                cells[5].textContent = String(device.commands);
                cells[6].textContent = String(device.errors);
              });
              var note = $("devices-changed");
              if (refreshNeeded && note) note.hidden = false;
            }).catch(function () {});
          }
          var refreshNeeded = false;

          // ---- charts ------------------------------------------------------------------------------------
          var chartWidth = 600, chartHeight = 180, pad = 28;
          function frame(container, label) {
            while (container.firstChild) container.removeChild(container.firstChild);
            var root = svg("svg", { viewBox: "0 0 " + chartWidth + " " + chartHeight, role: "img", "aria-label": label, preserveAspectRatio: "none" });
            container.appendChild(root);
            return root;
          }
          function axis(root, max) {
            root.appendChild(svg("line", { x1: pad, y1: chartHeight - pad, x2: chartWidth - 4, y2: chartHeight - pad, "class": "axis" }));
            var t = svg("text", { x: 2, y: 12, "class": "tick" }); t.textContent = String(max); root.appendChild(t);
            var z = svg("text", { x: 2, y: chartHeight - pad, "class": "tick" }); z.textContent = "0"; root.appendChild(z);
          }
          function niceMax(v) { if (v <= 1) return 1; var p = Math.pow(10, Math.floor(Math.log10(v))); return Math.ceil(v / p) * p; }

          function dayKey(d) { return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0"); }
          function drawDaily(counts, days) {
            var container = $("chart-daily"); if (!container) return;
            var root = frame(container, "Workouts per day over the last 30 days");
            var max = niceMax(Math.max.apply(null, days.map(function (d) { return counts[d] || 0; })));
            axis(root, max);
            var w = (chartWidth - pad - 4) / days.length;
            days.forEach(function (d, i) {
              var n = counts[d] || 0, h = (chartHeight - 2 * pad) * n / max;
              var bar = svg("rect", { x: pad + i * w + 1, y: chartHeight - pad - h, width: Math.max(1, w - 2), height: h, "class": "bar", "data-day": d, "data-count": n });
              var title = svg("title", {}); title.textContent = d + ": " + n; bar.appendChild(title);
              root.appendChild(bar);
              if ((days.length - 1 - i) % 7 === 0) {
                var label = svg("text", { x: pad + (i + 1) * w, y: chartHeight - 8, "class": "tick", "text-anchor": "end" }); label.textContent = d.slice(5); root.appendChild(label);
              }
            });
            container.dataset.total = String(days.reduce(function (sum, d) { return sum + (counts[d] || 0); }, 0));
          }
          function loadDaily() {
            var now = new Date(), days = [];
            for (var i = 29; i >= 0; i--) { var d = new Date(now.getFullYear(), now.getMonth(), now.getDate() - i); days.push(dayKey(d)); }
            var start = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 29);
            var counts = {}, pages = 0;
            function page(before) {
              var url = "/api/workouts?limit=1000&since=" + encodeURIComponent(start.toISOString().replace(/\.\d+Z$/, "Z")) + (before ? "&before=" + before : "");
              return getJSON(url).then(function (p) {
                p.workouts.forEach(function (w) { var k = dayKey(new Date(w.startedAt)); counts[k] = (counts[k] || 0) + 1; });
                pages++;
                if (p.next && pages < 50) return page(p.next);
              });
            }
            page(null).then(function () { drawDaily(counts, days); }).catch(function () { drawDaily(counts, days); });
          }
          function drawRate() {
            var container = $("chart-rate"); if (!container) return;
            var root = frame(container, "Commands per second over the last minutes");
            var max = niceMax(Math.max.apply(null, [1].concat(rates.map(function (r) { return r.rate; }))));
            axis(root, max);
            if (rates.length < 2) { container.dataset.points = String(rates.length); return; }
            // The line fills the width from the first sample on and then scrolls: at most 150 samples (5 minutes).
            var span = Math.max(30, rates.length), w = (chartWidth - pad - 4) / (span - 1), offset = span - rates.length;
            var points = rates.map(function (r, i) {
              return (pad + (offset + i) * w).toFixed(1) + "," + (chartHeight - pad - (chartHeight - 2 * pad) * r.rate / max).toFixed(1);
            });
            root.appendChild(svg("polyline", { points: points.join(" "), "class": "line" }));
            var last = rates[rates.length - 1];
            var label = svg("text", { x: chartWidth - 120, y: 14, "class": "tick" }); label.textContent = last.rate.toFixed(1) + " /s now"; root.appendChild(label);
            container.dataset.points = String(rates.length);
          }

          // ---- workouts table --------------------------------------------------------------------------
          var rows = [], next = null, sortKey = "id", sortDesc = true;
          function query() {
            var params = ["limit=200"];
            var device = $("filter-device").value.trim(), since = $("filter-since").value, until = $("filter-until").value;
            if (device) params.push("device=" + encodeURIComponent(device));
            if (since) params.push("since=" + encodeURIComponent(new Date(since + "T00:00:00").toISOString().replace(/\.\d+Z$/, "Z")));
            if (until) params.push("until=" + encodeURIComponent(new Date(new Date(until + "T00:00:00").getTime() + 86400000).toISOString().replace(/\.\d+Z$/, "Z")));
            return "/api/workouts?" + params.join("&");
          }
          function loadWorkouts(more) {
            var url = query() + (more && next ? "&before=" + next : "");
            return getJSON(url).then(function (p) {
              rows = more ? rows.concat(p.workouts) : p.workouts;
              next = p.next || null;
              $("workouts-more").hidden = !next;
              renderWorkouts();
            }).catch(function () {});
          }
          function renderWorkouts() {
            var body = $("workout-rows");
            var sorted = rows.slice().sort(function (a, b) {
              var x = a[sortKey], y = b[sortKey];
              if (x === undefined || x === null) x = sortDesc ? -Infinity : Infinity;
              if (y === undefined || y === null) y = sortDesc ? -Infinity : Infinity;
              var c = x < y ? -1 : x > y ? 1 : 0;
              return sortDesc ? -c : c;
            });
            while (body.firstChild) body.removeChild(body.firstChild);
            if (!sorted.length) { var tr0 = el("tr"); var td0 = el("td", "No workouts match.", "empty"); td0.colSpan = 6; tr0.appendChild(td0); body.appendChild(tr0); }
            sorted.forEach(function (w) {
              var tr = el("tr");
              tr.appendChild(el("td", w.id, "num"));
              tr.appendChild(el("td", w.device));
              tr.appendChild(el("td", w.location, "text"));
              tr.appendChild(el("td", w.intensityLevel, "num"));
              tr.appendChild(el("td", shortTime(w.startedAt)));
              tr.appendChild(el("td", w.durationSeconds !== undefined ? (w.durationSeconds / 60).toFixed(1) : "active", "num"));
              body.appendChild(tr);
            });
            var heads = document.querySelectorAll("#workout-table th[data-sort]");
            for (var i = 0; i < heads.length; i++) {
              heads[i].setAttribute("aria-sort", heads[i].dataset.sort === sortKey ? (sortDesc ? "descending" : "ascending") : "none");
            }
          }
          var table = $("workout-table");
          if (table) {
            var heads = table.querySelectorAll("th[data-sort]");
            for (var i = 0; i < heads.length; i++) {
              heads[i].tabIndex = 0;
              heads[i].addEventListener("click", function (event) {
                var key = event.currentTarget.dataset.sort;
                if (key === sortKey) sortDesc = !sortDesc; else { sortKey = key; sortDesc = key === "id" || key === "startedAt"; }
                renderWorkouts();
              });
            }
            $("workout-filter").addEventListener("submit", function (event) { event.preventDefault(); loadWorkouts(false); });
            $("workouts-more").addEventListener("click", function () { loadWorkouts(true); });
            loadWorkouts(false);
          }

          loadDaily();
          drawRate();
          refreshStatus();
          setInterval(refreshStatus, 2000);
          setInterval(loadDaily, 300000);
        })();
        """##
}

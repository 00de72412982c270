/// `/assets/app.js`: the live parts of the page. A file of its own, so the Content-Security-Policy allows no
/// inline script at all. Device strings only ever reach the page as text nodes (`textContent`), never as markup.
///
/// Every panel is drawn from what the API answers, and drawn again when the event stream says it changed:
/// the cards, the active workouts, the wearables, the workouts table and the shares come from one refresh, so a
/// card always agrees with the list under it.
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
          function svg(tag, attrs, text) {
            var node = document.createElementNS(svgNS, tag);
            for (var k in attrs) node.setAttribute(k, String(attrs[k]));
            if (text !== undefined) node.textContent = String(text);
            return node;
          }
          function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
          function getJSON(url) {
            return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
              if (r.status === 401) { window.location.assign("/login"); throw new Error("login needed"); }
              if (!r.ok) throw new Error(url + ": HTTP " + r.status);
              return r.json();
            });
          }

          // ---- times, in the hub's time zone, one short format ------------------------------------------------
          var zone = document.documentElement.dataset.timeZone;
          var parts = (function () {
            var options = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23", weekday: "short" };
            var format;
            try { format = new Intl.DateTimeFormat("en-GB", Object.assign({ timeZone: zone }, options)); }
            catch (e) { format = new Intl.DateTimeFormat("en-GB", options); }
            return function (date) {
              var p = {};
              format.formatToParts(date).forEach(function (x) { p[x.type] = x.value; });
              return p;
            };
          })();
          function dayKey(date) { var p = parts(date); return p.year + "-" + p.month + "-" + p.day; }
          function shortTime(iso) {
            if (!iso) return "";
            var p = parts(new Date(iso));
            return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute;
          }
          function clock(iso) { var p = parts(new Date(iso)); return p.hour + ":" + p.minute + ":" + p.second; }
          // Midnight of a `YYYY-MM-DD` day in the hub's zone, as an instant (what the date filters mean).
          function zoneMidnight(day) {
            var guess = Date.parse(day + "T00:00:00Z"), p = parts(new Date(guess));
            var shown = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
            return new Date(guess - (shown - guess));
          }
          function isoSeconds(date) { return date.toISOString().replace(/\.\d+Z$/, "Z"); }
          function timeNode(iso) { var t = el("time", shortTime(iso)); t.dateTime = iso || ""; return t; }
          // Durations as people say them: "45 s", "12 min", "1 h 02 min".
          function spoken(seconds) {
            var total = Math.max(0, Math.floor(seconds));
            if (total < 60) return total + " s";
            if (total < 3600) return Math.floor(total / 60) + " min";
            return Math.floor(total / 3600) + " h " + String(Math.floor(total % 3600 / 60)).padStart(2, "0") + " min";
          }
          function runningNode(iso) {
            var span = el("span", "running " + spoken((Date.now() - Date.parse(iso)) / 1000), "running");
            span.dataset.started = iso;
            return span;
          }
          function tickRunning() {
            var spans = document.querySelectorAll(".running[data-started]");
            for (var i = 0; i < spans.length; i++) spans[i].textContent = "running " + spoken((Date.now() - Date.parse(spans[i].dataset.started)) / 1000);
          }

          // ---- what the page shows, kept from the API ------------------------------------------------------
          var state = { status: null, devices: [], unknown: [], active: [], shares: [], names: {}, lastCommand: {} };
          function nameOf(identity, record) {
            if (record && record.deviceName) return record.deviceName;
            return state.names[identity] || null;
          }
          function wearableNode(identity, record) {
            var span = el("span", null, "wearable");
            var name = nameOf(identity, record);
            if (name) { span.appendChild(el("strong", name)); span.appendChild(document.createTextNode(" ")); span.appendChild(el("span", identity, "serial")); }
            else span.textContent = identity;
            return span;
          }
          function cell(row, label, content, cls) {
            var td = el("td", null, cls);
            td.dataset.label = label;
            if (content instanceof Node) td.appendChild(content); else td.textContent = content === undefined || content === null ? "" : String(content);
            row.appendChild(td);
            return td;
          }
          function emptyRow(body, columns, text) {
            var tr = el("tr"), td = el("td", text, "empty"); td.colSpan = columns; tr.appendChild(td); body.appendChild(tr);
          }
          // A panel is drawn again only when what it shows changed, so a reader's selection survives a refresh.
          var drawn = {};
          function changed(part, data) {
            var key = JSON.stringify(data);
            if (drawn[part] === key) return false;
            drawn[part] = key;
            return true;
          }
          function setSummary(key, value) {
            var node = document.querySelector('[data-summary="' + key + '"]');
            if (node) node.textContent = String(value);
          }

          function renderCards() {
            var s = state.status;
            var connected = state.devices.filter(function (d) { return d.connected; }).length;
            setSummary("active", state.active.length);
            setSummary("devices", connected + " / " + state.devices.length);
            var today = dayKey(new Date());
            setSummary("today", daily.counts[today] || 0);
            setSummary("week", weekDays().reduce(function (sum, d) { return sum + (daily.counts[d] || 0); }, 0));
            if (s) {
              setSummary("shares", s.queuedShares);
              setSummary("errors", s.counters.errors);
              setSummary("lag", s.replication ? s.replication.pending : "off");
            }
          }
          function activeNodes(workout) {
            var span = el("span", null, "what");
            span.textContent = workout.location + " · level " + workout.intensityLevel;
            return span;
          }
          function renderActive() {
            var list = $("active-list"); if (!list || !changed("active", [state.active, state.names])) return;
            clear(list);
            if (!state.active.length) list.appendChild(el("li", "None.", "empty"));
            state.active.forEach(function (w) {
              var li = el("li");
              li.dataset.workout = String(w.id);
              li.appendChild(wearableNode(w.device, w));
              li.appendChild(activeNodes(w));
              li.appendChild(runningNode(w.startedAt));
              list.appendChild(li);
            });
          }
          function stateOf(device) {
            if (device.refused) return ["refused: " + device.refused, "bad"];
            if (device.connected) return ["connected", "ok"];
            return ["waiting" + (device.waitingReason ? ": " + device.waitingReason : ""), "warn"];
          }
          function renderDevices() {
            var body = $("device-rows");
            if (!body || !changed("devices", [state.devices, state.active, state.names, state.lastCommand])) return;
            clear(body);
            if (!state.devices.length) emptyRow(body, 6, "No wearable attached.");
            state.devices.forEach(function (device) {
              var tr = el("tr");
              tr.dataset.device = device.identity;
              var first = cell(tr, "Wearable", wearableNode(device.identity, null));
              if (device.node !== device.identity) first.appendChild(el("span", device.node, "node"));
              var st = stateOf(device);
              cell(tr, "State", st[0], st[1]);
              var active = state.active.filter(function (w) { return w.device === device.identity; })[0];
              var activeCell = cell(tr, "Active workout", active ? null : "—", "active-cell");
              if (active) {
                activeCell.appendChild(document.createTextNode(active.location + " · level " + active.intensityLevel + " · "));
                activeCell.appendChild(runningNode(active.startedAt));
              }
              var last = state.lastCommand[device.identity];
              cell(tr, "Last command", last ? last.type + " at " + clock(last.time) : "—", "last-command");
              cell(tr, "Commands", device.commands, "num");
              cell(tr, "Errors", device.errors, "num");
              body.appendChild(tr);
            });
          }
          function renderShares() {
            var body = $("share-rows"); if (!body || !changed("shares", [state.shares, state.names])) return;
            clear(body);
            if (!state.shares.length) emptyRow(body, 6, "No shares queued.");
            state.shares.forEach(function (share) {
              var tr = el("tr");
              cell(tr, "#", share.id, "num id");
              cell(tr, "Wearable", wearableNode(share.device, share));
              cell(tr, "Service", share.service);
              var st = el("span", share.status === "delivered" ? "delivered " : "pending");
              if (share.status === "delivered" && share.deliveredAt) st.appendChild(timeNode(share.deliveredAt));
              cell(tr, "State", st, share.status === "delivered" ? "ok" : "warn");
              cell(tr, "Attempts", share.attempts, "num");
              cell(tr, "Last error", share.lastError || "", "text");
              body.appendChild(tr);
            });
          }

          // ---- one refresh for every panel, soon after the stream says something changed ----------------------
          var refreshTimer = null, refreshing = false, again = false;
          function refreshSoon(delay) {
            if (refreshTimer) return;
            refreshTimer = setTimeout(function () { refreshTimer = null; refresh(); }, delay === undefined ? 100 : delay);
          }
          function refresh() {
            if (refreshing) { again = true; return; }
            refreshing = true;
            Promise.all([
              getJSON("/api/status"), getJSON("/api/devices"), getJSON("/api/workouts?active=true&limit=1000"),
              getJSON("/api/shares?limit=20"), loadWorkouts(false, true)
            ]).then(function (r) {
              state.status = r[0];
              state.devices = r[1].devices;
              state.unknown = r[1].unknown || [];
              state.names = {};
              state.devices.concat(state.unknown).forEach(function (d) { if (d.name) state.names[d.identity] = d.name; });
              state.active = r[2].workouts;
              state.shares = r[3].shares;
              renderCards(); renderActive(); renderDevices(); renderShares(); renderWorkouts();
              sampleRate(r[0]);
              if (!feedSeeded) seedFeed();
            }).catch(function () {}).then(function () {
              refreshing = false;
              if (again) { again = false; refreshSoon(0); }
            });
          }

          // ---- live feed -------------------------------------------------------------------------------
          var feed = $("feed-list"), feedState = $("feed-state");
          var maxFeed = 200, feedSeeded = false;
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
          function feedItem(ev, cls) {
            var li = el("li", null, "ev ev-" + ev.type + (cls ? " " + cls : ""));
            var t = el("time", clock(ev.time)); t.dateTime = ev.time; li.appendChild(t);
            var dev = el("span", nameOf(ev.device, ev.workout || ev.share) || ev.device, "dev");
            li.appendChild(dev);
            li.appendChild(el("span", ev.type.replace(/_/g, " "), "type"));
            li.appendChild(el("span", describe(ev), "detail"));
            return li;
          }
          function addFeed(ev) {
            feed.insertBefore(feedItem(ev), feed.firstChild);
            while (feed.childNodes.length > maxFeed) feed.removeChild(feed.lastChild);
            if (ev.type === "command_received") {
              state.lastCommand[ev.device] = { type: ev.command_type || "invalid line", time: ev.time };
              var row = document.querySelector('#device-rows tr[data-device="' + CSS.escape(ev.device) + '"] .last-command');
              if (row) row.textContent = state.lastCommand[ev.device].type + " at " + clock(ev.time);
            }
            if (ev.type === "workout_started" && ev.workout) countWorkout(ev.workout);
            if (/^(workout_|share_|device_)/.test(ev.type)) refreshSoon();
            else if (ev.type === "reply_sent") refreshSoon(300);
          }
          // Until the stream brings news, the feed shows what the store holds: the latest starts, ends and shares.
          function seedFeed() {
            if (!feed) return;
            feedSeeded = true;
            var past = [];
            rows.slice(0, 30).forEach(function (w) {
              past.push({ time: w.startedAt, type: "workout_started", device: w.device, workout: w });
              if (w.endedAt) past.push({ time: w.endedAt, type: "workout_ended", device: w.device, workout: w });
            });
            state.shares.forEach(function (s) {
              past.push({ time: s.queuedAt, type: "share_queued", device: s.device, share: s });
              if (s.deliveredAt) past.push({ time: s.deliveredAt, type: "share_delivered", device: s.device, share: s });
            });
            past.sort(function (a, b) { return Date.parse(b.time) - Date.parse(a.time); });
            past.slice(0, 30).forEach(function (ev) { feed.appendChild(feedItem(ev, "earlier")); });
          }
          if (feed && window.EventSource) {
            var source = new EventSource("/api/events");
            source.onopen = function () { feedState.textContent = "live"; feedState.className = "meta ok"; refreshSoon(0); };
            source.onerror = function () { feedState.textContent = "reconnecting…"; feedState.className = "meta warn"; };
            source.onmessage = function (message) {
              try { var line = JSON.parse(message.data); if (line && line.event) addFeed(line.event); } catch (e) { /* not an event */ }
            };
          }

          // ---- charts: drawn at the width they are shown, labelled, values written on them ------------------
          function chartFrame(container, label, height) {
            clear(container);
            var width = Math.max(260, Math.floor(container.clientWidth || 300));
            var root = svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img", "aria-label": label });
            container.appendChild(root);
            return { root: root, width: width, height: height };
          }
          // A step of 1, 2, 2.5 or 5 times a power of ten giving about four ticks; whole numbers for counts.
          function niceStep(max, whole) {
            var raw = max / 4, p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
            var steps = [1, 2, 2.5, 5, 10];
            for (var i = 0; i < steps.length; i++) {
              var step = steps[i] * p;
              if (step >= raw && (!whole || step === Math.round(step))) return Math.max(step, whole ? 1 : 0);
            }
            return 10 * p;
          }
          function yAxis(c, box, max, title, whole) {
            var step = niceStep(max, whole), top = Math.ceil(max / step) * step || step;
            for (var v = 0; v <= top + step / 2; v += step) {
              var y = box.bottom - (box.bottom - box.top) * v / top;
              c.root.appendChild(svg("line", { x1: box.left, y1: y, x2: box.right, y2: y, "class": v === 0 ? "axis" : "grid" }));
              c.root.appendChild(svg("text", { x: box.left - 4, y: y + 4, "class": "tick", "text-anchor": "end" }, Math.round(v * 100) / 100));
            }
            c.root.appendChild(svg("text", { x: 2, y: 11, "class": "axis-title" }, title));
            return top;
          }

          var daily = { counts: {}, counted: {} };
          function weekDays() {
            var now = new Date(), days = [], p = parts(now);
            var back = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(p.weekday);
            for (var i = Math.max(0, back); i >= 0; i--) days.push(dayKey(new Date(now.getTime() - i * 86400000)));
            return days;
          }
          function countWorkout(w) {
            if (daily.counted[w.id]) return;
            daily.counted[w.id] = true;
            var k = dayKey(new Date(w.startedAt));
            daily.counts[k] = (daily.counts[k] || 0) + 1;
            drawDaily(); renderCards();
          }
          function drawDaily() {
            var container = $("chart-daily"); if (!container) return;
            var wide = (container.clientWidth || 0) >= 520, n = wide ? 30 : 14;
            var caption = $("chart-daily-caption"); if (caption) caption.textContent = "Workouts per day, last " + n + " days";
            var now = Date.now(), days = [];
            for (var i = n - 1; i >= 0; i--) days.push(dayKey(new Date(now - i * 86400000)));
            var c = chartFrame(container, "Workouts per day over the last " + n + " days", 210);
            var box = { left: 34, right: c.width - 6, top: 22, bottom: c.height - 36 };
            var values = days.map(function (d) { return daily.counts[d] || 0; });
            var top = yAxis(c, box, Math.max(1, Math.max.apply(null, values)), "workouts", true);
            var w = (box.right - box.left) / n;
            days.forEach(function (d, i) {
              var count = values[i], h = (box.bottom - box.top) * count / top, x = box.left + i * w;
              var bar = svg("rect", { x: x + 1, y: box.bottom - h, width: Math.max(1, w - 2), height: h, "class": i === n - 1 ? "bar today" : "bar", "data-day": d, "data-count": count });
              bar.appendChild(svg("title", {}, d + ": " + count));
              c.root.appendChild(bar);
              if (count > 0) c.root.appendChild(svg("text", { x: x + w / 2, y: box.bottom - h - 4, "class": "value", "text-anchor": "middle" }, count));
              if ((n - 1 - i) % 7 === 0) c.root.appendChild(svg("text", { x: x + w / 2, y: box.bottom + 14, "class": "tick", "text-anchor": "middle" }, d.slice(5)));
            });
            c.root.appendChild(svg("text", { x: (box.left + box.right) / 2, y: c.height - 4, "class": "axis-title", "text-anchor": "middle" }, "day"));
            container.dataset.total = String(values.reduce(function (a, b) { return a + b; }, 0));
            container.dataset.days = String(n);
          }
          function loadDaily() {
            var since = new Date(Date.now() - 31 * 86400000);
            var counts = {}, counted = {}, pages = 0;
            function page(before) {
              var url = "/api/workouts?limit=1000&since=" + encodeURIComponent(isoSeconds(since)) + (before ? "&before=" + before : "");
              return getJSON(url).then(function (p) {
                p.workouts.forEach(function (w) { counted[w.id] = true; var k = dayKey(new Date(w.startedAt)); counts[k] = (counts[k] || 0) + 1; });
                pages++;
                if (p.next && pages < 50) return page(p.next);
              });
            }
            return page(null).then(function () { daily.counts = counts; daily.counted = counted; drawDaily(); renderCards(); }).catch(function () { drawDaily(); });
          }

          var rates = [], lastSample = null;
          function sampleRate(status) {
            var now = performance.now();
            if (lastSample && now - lastSample.at >= 1000) {
              var seconds = (now - lastSample.at) / 1000;
              rates.push({ at: Date.now(), rate: Math.max(0, (status.counters.commands - lastSample.commands) / seconds) });
              while (rates.length && rates[0].at < Date.now() - 300000) rates.shift();
              drawRate();
            }
            if (!lastSample || now - lastSample.at >= 1000) lastSample = { at: now, commands: status.counters.commands };
          }
          function drawRate() {
            var container = $("chart-rate"); if (!container) return;
            var c = chartFrame(container, "Commands per second over the last 5 minutes", 210);
            var box = { left: 34, right: c.width - 6, top: 22, bottom: c.height - 36 };
            var max = Math.max.apply(null, [1].concat(rates.map(function (r) { return r.rate; })));
            var top = yAxis(c, box, max, "commands/s");
            var now = Date.now(), span = 300000;
            function x(at) { return box.right - (box.right - box.left) * (now - at) / span; }
            (c.width >= 480 ? [300, 240, 180, 120, 60, 0] : [300, 180, 60, 0]).forEach(function (s) {
              c.root.appendChild(svg("text", { x: x(now - s * 1000), y: box.bottom + 14, "class": "tick", "text-anchor": s === 300 ? "start" : s === 0 ? "end" : "middle" }, s ? "−" + s / 60 + " min" : "now"));
            });
            c.root.appendChild(svg("text", { x: (box.left + box.right) / 2, y: c.height - 4, "class": "axis-title", "text-anchor": "middle" }, "time"));
            container.dataset.points = String(rates.length);
            if (rates.length < 2) return;
            var points = rates.map(function (r) { return x(r.at).toFixed(1) + "," + (box.bottom - (box.bottom - box.top) * r.rate / top).toFixed(1); });
            c.root.appendChild(svg("polyline", { points: points.join(" "), "class": "line" }));
            var last = rates[rates.length - 1];
            c.root.appendChild(svg("text", { x: box.right, y: 11, "class": "value", "text-anchor": "end" }, "now " + last.rate.toFixed(1) + "/s, peak " + max.toFixed(1) + "/s"));
          }

          // ---- workouts table --------------------------------------------------------------------------
          var rows = [], next = null, sortKey = "id", sortDesc = true;
          function filterParams() {
            var params = [];
            var device = $("filter-device").value.trim(), since = $("filter-since").value, until = $("filter-until").value;
            if (device) params.push("device=" + encodeURIComponent(device));
            if (since) params.push("since=" + encodeURIComponent(isoSeconds(zoneMidnight(since))));
            if (until) {
              var after = new Date(Date.parse(until + "T00:00:00Z") + 86400000).toISOString().slice(0, 10);
              params.push("until=" + encodeURIComponent(isoSeconds(zoneMidnight(after))));
            }
            return params;
          }
          function updateCSVLink() {
            var link = $("workouts-csv"); if (!link) return;
            var params = filterParams();
            link.href = "/api/workouts.csv" + (params.length ? "?" + params.join("&") : "");
          }
          // A refresh reloads as many rows as are shown, so news never pushes a loaded page away.
          function loadWorkouts(more, quiet) {
            if (!$("workout-table")) return Promise.resolve();
            var limit = more ? 200 : Math.min(1000, Math.max(200, quiet ? rows.length : 0));
            var url = "/api/workouts?" + filterParams().concat(["limit=" + limit]).join("&") + (more && next ? "&before=" + next : "");
            return getJSON(url).then(function (p) {
              rows = more ? rows.concat(p.workouts) : p.workouts;
              next = p.next || null;
              $("workouts-more").hidden = !next;
              if (!quiet) renderWorkouts();
            }).catch(function () {});
          }
          function renderWorkouts() {
            var body = $("workout-rows"); if (!body || !changed("workouts", [rows, sortKey, sortDesc, state.names])) return;
            var sorted = rows.slice().sort(function (a, b) {
              var x = a[sortKey], y = b[sortKey];
              if (sortKey === "device") { x = nameOf(a.device, a) || a.device; y = nameOf(b.device, b) || b.device; }
              if (x === undefined || x === null) x = sortDesc ? -Infinity : Infinity;
              if (y === undefined || y === null) y = sortDesc ? -Infinity : Infinity;
              var c = x < y ? -1 : x > y ? 1 : 0;
              return sortDesc ? -c : c;
            });
            clear(body);
            if (!sorted.length) emptyRow(body, 6, "No workouts match.");
            sorted.forEach(function (w) {
              var tr = el("tr");
              tr.dataset.workout = String(w.id);
              cell(tr, "#", w.id, "num id");
              cell(tr, "Wearable", wearableNode(w.device, w));
              cell(tr, "Location", w.location, "text");
              cell(tr, "Level", w.intensityLevel, "num");
              cell(tr, "Started", timeNode(w.startedAt));
              cell(tr, "Duration", w.durationSeconds !== undefined && w.durationSeconds !== null ? spoken(w.durationSeconds) : runningNode(w.startedAt), "num");
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
            $("workout-filter").addEventListener("submit", function (event) { event.preventDefault(); updateCSVLink(); loadWorkouts(false); });
            $("workout-filter").addEventListener("input", updateCSVLink);
            $("workouts-more").addEventListener("click", function () { loadWorkouts(true); });
            updateCSVLink();
          }

          var resizeTimer = null;
          window.addEventListener("resize", function () {
            clearTimeout(resizeTimer);
            resizeTimer = setTimeout(function () { drawDaily(); drawRate(); }, 150);
          });
          loadDaily();
          drawRate();
          refresh();
          setInterval(function () { getJSON("/api/status").then(function (s) { state.status = s; renderCards(); sampleRate(s); }).catch(function () {}); }, 2000);
          setInterval(tickRunning, 1000);
          setInterval(loadDaily, 300000);
        })();
        """##
}

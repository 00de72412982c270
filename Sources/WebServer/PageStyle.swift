/// `/assets/style.css`: one small stylesheet, phone first (390 px wide and up), light and dark. On a narrow
/// screen every table becomes a stack of cards, one per row, each cell labelled (`data-label`), so nothing is
/// wider than the screen.
enum PageStyle {
    static let source = ##"""
        :root { --bg: #f6f7f9; --fg: #1b1f24; --muted: #5b6472; --card: #fff; --line: #dde1e6; --accent: #2563eb; --accent-soft: #93b4f5; --ok: #15803d; --warn: #b45309; --bad: #b91c1c; }
        @media (prefers-color-scheme: dark) { :root { --bg: #111418; --fg: #e6e9ee; --muted: #9aa3b1; --card: #1a1f26; --line: #2c333d; --accent: #60a5fa; --accent-soft: #2f5d99; --ok: #4ade80; --warn: #fbbf24; --bad: #f87171; } }
        * { box-sizing: border-box; }
        [hidden] { display: none !important; }
        html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
        header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--card); display: flex; justify-content: space-between; align-items: center; gap: 12px; }
        header h1 { margin: 0; font-size: 20px; }
        main { padding: 12px; max-width: 1200px; margin: 0 auto; display: grid; gap: 12px; grid-template-columns: minmax(0, 1fr); }
        @media (min-width: 900px) { main { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } #summary, #active, #devices, #charts, #workouts, #shares, #hubs { grid-column: 1 / -1; } }
        section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; min-width: 0; }
        h2 { margin: 0 0 8px; font-size: 16px; } h3 { font-size: 14px; margin: 12px 0 4px; }
        .meta { color: var(--muted); font-size: 13px; margin: 2px 0 0; font-weight: normal; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px; background: none; border: 0; padding: 0; }
        @media (max-width: 480px) { .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px; display: flex; flex-direction: column; min-width: 0; }
        .card .label { color: var(--muted); font-size: 12px; } .card .value { font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; font-size: 14px; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; white-space: nowrap; }
        td.text { overflow-wrap: anywhere; }
        th[data-sort] { cursor: pointer; user-select: none; } th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        time, .running { white-space: nowrap; font-variant-numeric: tabular-nums; }
        .wearable strong { font-weight: 600; } .serial, .node { color: var(--muted); font-size: 12px; } .node { display: block; }
        .running { color: var(--ok); }
        .ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
        .empty { color: var(--muted); }
        .notice { border-left: 3px solid var(--warn); padding: 6px 10px; background: var(--card); }
        dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 12px; margin: 0; } dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .active-list { list-style: none; margin: 0; padding: 0; }
        .active-list li { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; padding: 6px 0; border-bottom: 1px solid var(--line); }
        .active-list li:last-child { border-bottom: 0; } .active-list .what { flex: 1 1 10em; }
        @media (max-width: 640px) {
          table.stack thead { display: none; }
          table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
          table.stack tr { border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; margin-bottom: 8px; }
          table.stack td { border: 0; padding: 3px 0; text-align: right; display: flow-root; }
          table.stack td::before { content: attr(data-label); color: var(--muted); font-size: 12px; float: left; margin-right: 12px; }
          table.stack td:first-child { display: block; text-align: left; font-size: 15px; }
          table.stack td:first-child::before { content: none; }
          table.stack td.empty { display: block; text-align: left; }
          table.stack td.empty::before { content: none; }
          table.stack td.id { color: var(--muted); font-size: 12px; }
          table.stack td.id::before { content: "#"; float: none; margin: 0; font-size: 12px; }
        }
        .js-only { display: none; } html.js .js-only { display: block; }
        .charts { display: grid; gap: 12px; grid-template-columns: minmax(0, 1fr); } @media (min-width: 700px) { .charts { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } }
        figure { margin: 0; min-width: 0; } figcaption { color: var(--muted); font-size: 13px; margin-bottom: 4px; }
        .chart { width: 100%; overflow: hidden; } .chart svg { display: block; max-width: 100%; }
        .chart .bar { fill: var(--accent-soft); } .chart .bar.today { fill: var(--accent); }
        .chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
        .chart .axis { stroke: var(--muted); } .chart .grid { stroke: var(--line); }
        .chart .tick { fill: var(--muted); font-size: 11px; } .chart .value { fill: var(--fg); font-size: 11px; font-weight: 600; }
        .chart .axis-title { fill: var(--muted); font-size: 11px; font-style: italic; }
        .feed { list-style: none; margin: 0; padding: 0; max-height: 320px; overflow-y: auto; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
        .feed li { display: flex; gap: 4px 8px; padding: 3px 0; border-bottom: 1px solid var(--line); flex-wrap: wrap; min-width: 0; }
        .feed li.earlier { opacity: 0.7; }
        .feed time { color: var(--muted); } .feed .dev { font-weight: 600; } .feed .type { color: var(--accent); } .feed .detail { overflow-wrap: anywhere; min-width: 0; }
        html.js .filters, .filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 8px; }
        .filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); min-width: 0; }
        input, select, button, .button { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); max-width: 100%; }
        button, .button { background: var(--accent); color: #fff; border: 0; cursor: pointer; text-decoration: none; display: inline-block; }
        .logout button { background: none; color: var(--accent); border: 1px solid var(--line); }
        .login { max-width: 360px; margin: 10vh auto; display: block; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 20px; }
        .login form { display: flex; flex-direction: column; gap: 10px; } .login label { display: flex; flex-direction: column; gap: 4px; }
        """##
}

/// `/assets/style.css`: one small stylesheet, phone first (390 px wide and up), light and dark.
enum PageStyle {
    static let source = ##"""
        :root { --bg: #f6f7f9; --fg: #1b1f24; --muted: #5b6472; --card: #fff; --line: #dde1e6; --accent: #2563eb; --ok: #15803d; --warn: #b45309; --bad: #b91c1c; }
        @media (prefers-color-scheme: dark) { :root { --bg: #111418; --fg: #e6e9ee; --muted: #9aa3b1; --card: #1a1f26; --line: #2c333d; --accent: #60a5fa; --ok: #4ade80; --warn: #fbbf24; --bad: #f87171; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
        header { padding: 12px 16px; border-bottom: 1px solid var(--line); background: var(--card); }
        header h1 { margin: 0; font-size: 20px; }
        main { padding: 12px; max-width: 1200px; margin: 0 auto; display: grid; gap: 12px; grid-template-columns: 1fr; }
        @media (min-width: 900px) { main { grid-template-columns: 1fr 1fr; } #summary, #devices, #charts, #feed, #workouts, #shares { grid-column: 1 / -1; } }
        section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; min-width: 0; }
        h2 { margin: 0 0 8px; font-size: 16px; } h3 { font-size: 14px; margin: 12px 0 4px; }
        .meta { color: var(--muted); font-size: 13px; margin: 2px 0 0; font-weight: normal; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 8px; background: none; border: 0; padding: 0; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px; display: flex; flex-direction: column; }
        .card .label { color: var(--muted); font-size: 12px; } .card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: 14px; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
        td.text { white-space: normal; overflow-wrap: anywhere; min-width: 8em; }
        th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; }
        th[data-sort] { cursor: pointer; user-select: none; } th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        .ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
        .empty { color: var(--muted); }
        .notice { border-left: 3px solid var(--warn); padding: 6px 10px; background: var(--card); }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 0; } dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .js-only { display: none; } html.js .js-only { display: block; }
        .charts { display: grid; gap: 12px; grid-template-columns: 1fr; } @media (min-width: 700px) { .charts { grid-template-columns: 1fr 1fr; } }
        figure { margin: 0; } figcaption { color: var(--muted); font-size: 13px; margin-bottom: 4px; }
        .chart svg { width: 100%; height: 180px; display: block; }
        .chart .bar { fill: var(--accent); } .chart .line { fill: none; stroke: var(--accent); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .chart .axis { stroke: var(--line); } .chart .tick { fill: var(--muted); font-size: 11px; }
        .feed { list-style: none; margin: 0; padding: 0; max-height: 320px; overflow-y: auto; font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
        .feed li { display: flex; gap: 8px; padding: 3px 0; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
        .feed time { color: var(--muted); } .feed .dev { font-weight: 600; overflow-wrap: anywhere; } .feed .type { color: var(--accent); } .feed .detail { overflow-wrap: anywhere; }
        html.js .filters, .filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 8px; }
        .filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
        input, button { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
        button { background: var(--accent); color: #fff; border: 0; cursor: pointer; }
        .login { max-width: 360px; margin: 10vh auto; display: block; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 20px; }
        .login form { display: flex; flex-direction: column; gap: 10px; } .login label { display: flex; flex-direction: column; gap: 4px; }
        """##
}

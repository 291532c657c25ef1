"""Draws the benchmark's results as SVG charts, from the same JSON lines `table.py` reads:
server CPU per call and p50/p99 latency per scenario (ours beside rmcp tuned, rmcp as its
examples show it, and the floor), and start-up time against the number of tools.

Usage: charts.py RESULTS.jsonl OUTPUT_DIR

Plain SVG written by hand (no plotting library to install): bars with their values
written beside them, each scenario scaled on its own (a stdio call costs a tenth of an
HTTP one, and one scale would flatten the stdio bars to nothing), colours that read in a
light and a dark page.
"""

import json
import os
import statistics
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

SERVERS = [
    ("ours", "ours", "#1a66d9"),
    ("rmcp-tuned", "rmcp tuned", "#e8710a"),
    ("rmcp-example", "rmcp example", "#b58900"),
    ("floor", "floor", "#7a828e"),
]
WIDTH = 760
LABEL_WIDTH = 120
BAR_LEFT = 250
BAR_SPACE = 400
BAR_HEIGHT = 14
STYLE = """
  <style>
    text { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 12px; fill: #1b2130; }
    .title { font-size: 15px; font-weight: 700; }
    .note, .axis { fill: #4a5263; }
    .scenario { font-weight: 600; }
    .rule { stroke: #c9d0db; }
    @media (prefers-color-scheme: dark) {
      text { fill: #e5e8ed; }
      .note, .axis { fill: #aab2bf; }
      .rule { stroke: #3b4350; }
    }
  </style>"""


def read(path):
    runs = defaultdict(list)
    order = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["scenario"] not in order:
                order.append(row["scenario"])
            if row["data"]:
                runs[(row["server"], row["scenario"])].append(row["data"])
    return runs, order


def median(runs, server, scenario, field):
    values = [run[field] for run in runs[(server, scenario)] if run.get(field) is not None]
    return statistics.median(values) if values else None


def svg(height, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img">{STYLE}\n{body}\n</svg>\n')


def text(x, y, words, css="", anchor="start"):
    klass = f' class="{css}"' if css else ""
    return f'<text x="{x:.1f}" y="{y:.1f}"{klass} text-anchor="{anchor}">{escape(words)}</text>'


def number(value, unit):
    digits = 2 if value < 10 else (1 if value < 100 else 0)
    return f"{value:,.{digits}f} {unit}"


def bars(runs, order, title, note, series, unit):
    """One block per scenario; in it, a row per server and a bar per entry of `series`
    (field, label, opacity), scaled to the largest value of the block."""
    scenarios = [s for s in order if not s.startswith("start-up") and any(runs[(name, s)] for name, _, _ in SERVERS)]
    parts = [text(16, 26, title, "title"), text(16, 44, note, "note")]
    y = 66
    for scenario in scenarios:
        values = [median(runs, name, scenario, field) for name, _, _ in SERVERS for field, _, _ in series]
        largest = max((v for v in values if v is not None), default=0) or 1
        parts.append(text(16, y + 12, scenario, "scenario"))
        y += 20
        for name, label, colour in SERVERS:
            if not runs[(name, scenario)]:
                continue
            parts.append(text(LABEL_WIDTH + 110, y + BAR_HEIGHT * len(series) / 2 + 4, label, anchor="end"))
            for field, field_label, opacity in series:
                value = median(runs, name, scenario, field)
                if value is None:
                    continue
                width = max(1.0, BAR_SPACE * value / largest)
                parts.append(f'<rect x="{BAR_LEFT}" y="{y:.1f}" width="{width:.1f}" height="{BAR_HEIGHT - 2}" '
                             f'fill="{colour}" fill-opacity="{opacity}"><title>{escape(label)}, {escape(scenario)}: '
                             f'{escape(field_label + " " if field_label else "")}{number(value, unit)}</title></rect>')
                shown = f"{field_label} {number(value, unit)}" if field_label else number(value, unit)
                parts.append(text(BAR_LEFT + width + 6, y + BAR_HEIGHT - 3, shown, "axis"))
                y += BAR_HEIGHT
            y += 4
        y += 10
        parts.append(f'<line class="rule" x1="16" x2="{WIDTH - 16}" y1="{y - 6:.1f}" y2="{y - 6:.1f}"/>')
    return svg(int(y + 10), "\n".join(parts))


def startup(runs, order):
    """Start-up time (spawn to the first answer) against the number of tools."""
    points = []
    for scenario in order:
        if not scenario.startswith("start-up with "):
            continue
        tools = int(scenario.removeprefix("start-up with ").split()[0].replace(",", ""))
        value = median(runs, "ours", scenario, "startup_ms")
        if value is not None:
            points.append((tools, value))
    points.sort()
    height, left, right, top, bottom = 300, 70, WIDTH - 50, 80, 250
    # The points start clear of the axis, so the first one's label does not meet its ticks.
    inset = 40
    parts = [text(16, 26, "Start-up against the number of tools", "title"),
             text(16, 44, "ours: milliseconds from spawn to the first answer on stdio (median of every start measured)", "note")]
    if not points:
        return svg(height, "\n".join(parts + [text(16, 80, "no start-up measured", "note")]))
    most_tools = max(tools for tools, _ in points)
    most_ms = max(ms for _, ms in points) * 1.15 or 1
    x = lambda tools: left + inset + (right - left - inset) * tools / most_tools
    y = lambda ms: bottom - (bottom - top) * ms / most_ms
    parts.append(f'<line class="rule" x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}"/>')
    parts.append(f'<line class="rule" x1="{left}" x2="{left}" y1="{top - 10}" y2="{bottom}"/>')
    for step in range(5):
        ms = most_ms * step / 4
        parts.append(text(left - 8, y(ms) + 4, f"{ms:.1f}", "axis", "end"))
    parts.append(text((left + right) / 2, bottom + 38, "tools in the catalog", "axis", "middle"))
    parts.append(text(left - 8, top - 14, "ms", "axis", "end"))
    path = " ".join(f"{'M' if index == 0 else 'L'}{x(tools):.1f},{y(ms):.1f}" for index, (tools, ms) in enumerate(points))
    parts.append(f'<path d="{path}" fill="none" stroke="{SERVERS[0][2]}" stroke-width="2"/>')
    for tools, ms in points:
        parts.append(f'<circle cx="{x(tools):.1f}" cy="{y(ms):.1f}" r="4" fill="{SERVERS[0][2]}">'
                     f'<title>{tools:,} tools: {ms:.2f} ms</title></circle>')
        parts.append(text(x(tools), y(ms) - 10, f"{ms:.2f} ms", "axis", "middle"))
        parts.append(text(x(tools), bottom + 18, f"{tools:,}", "axis", "middle"))
    return svg(height, "\n".join(parts))


def main():
    results, directory = sys.argv[1], sys.argv[2]
    runs, order = read(results)
    os.makedirs(directory, exist_ok=True)
    charts = {
        "cpu.svg": bars(runs, order, "Server CPU per call",
                        "µs of CPU (user + system, all threads) per request; shorter is better; each scenario on its own scale",
                        [("cpu_us_per_request", "", 1.0)], "µs"),
        "latency.svg": bars(runs, order, "Latency per call",
                            "p50 (dark) and p99 (light), µs; shorter is better; each scenario on its own scale",
                            [("p50_us", "p50", 1.0), ("p99_us", "p99", 0.45)], "µs"),
        "startup.svg": startup(runs, order),
    }
    for name, chart in charts.items():
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8") as out:
            out.write(chart)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Draws one trace, as a receiver holds it, as an SVG waterfall: a row per span, indented
under its parent, its bar where it ran in time, coloured by the process that exported it.
Pure Python: the picture in the README is made by the test that proves the trace."""

from html import escape

COLOURS = ["#3b6fb6", "#c2571a", "#2f8a4e", "#8a3fa0"]
ROW, LABEL_WIDTH, BAR_WIDTH, PAD = 26, 330, 470, 12


def _depths(spans):
    by_id = {span["span_id"]: span for span in spans}
    depths = {}

    def depth(span):
        if span["span_id"] not in depths:
            parent = by_id.get(span["parent_span_id"])
            depths[span["span_id"]] = 0 if parent is None else depth(parent) + 1
        return depths[span["span_id"]]

    for span in spans:
        depth(span)
    return depths


def _ordered(spans, depths):
    """Each span followed by its children, by start time: the order of a waterfall."""
    children = {}
    for span in spans:
        children.setdefault(span["parent_span_id"], []).append(span)
    ids = {span["span_id"] for span in spans}
    roots = [span for span in spans if span["parent_span_id"] not in ids]
    ordered = []

    def visit(span):
        ordered.append(span)
        for child in sorted(children.get(span["span_id"], []), key=lambda s: s["start"]):
            visit(child)

    for root in sorted(roots, key=lambda s: s["start"]):
        visit(root)
    return ordered


def svg(spans, title):
    """The SVG text of the waterfall of `spans` (those of one trace)."""
    depths = _depths(spans)
    ordered = _ordered(spans, depths)
    start = min(span["start"] for span in spans)
    end = max(span["end"] for span in spans)
    scale = BAR_WIDTH / max(end - start, 1)
    services = []
    for span in ordered:
        if span["service"] not in services:
            services.append(span["service"])
    height = PAD * 2 + ROW * (len(ordered) + 2)
    width = LABEL_WIDTH + BAR_WIDTH + PAD * 3 + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="ui-monospace, Menlo, monospace" font-size="12" role="img" '
           f'aria-label="{escape(title)}">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="{PAD}" y="{PAD + 14}" font-weight="bold" fill="#1b1b1b">{escape(title)}</text>']
    legend_x = PAD
    for index, service in enumerate(services):
        colour = COLOURS[index % len(COLOURS)]
        out.append(f'<rect x="{legend_x}" y="{PAD + ROW - 2}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{legend_x + 14}" y="{PAD + ROW + 7}" fill="#1b1b1b">{escape(service or "?")}</text>')
        legend_x += 24 + 8 * len(service or "?")
    for row, span in enumerate(ordered):
        y = PAD + ROW * (row + 2)
        colour = COLOURS[services.index(span["service"]) % len(COLOURS)]
        kind = "" if span["kind"] == "INTERNAL" else f' ({span["kind"].lower()})'
        label = "  " * depths[span["span_id"]] + span["name"] + kind
        x = LABEL_WIDTH + PAD * 2 + (span["start"] - start) * scale
        bar = max((span["end"] - span["start"]) * scale, 2)
        millis = (span["end"] - span["start"]) / 1e6
        out.append(f'<text x="{PAD}" y="{y + 14}" fill="#1b1b1b" xml:space="preserve">{escape(label)}</text>')
        out.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{bar:.1f}" height="14" rx="2" fill="{colour}"/>')
        out.append(f'<text x="{x + bar + 4:.1f}" y="{y + 14}" fill="#555555">{millis:.1f} ms</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

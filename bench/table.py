"""Prints the benchmark table (markdown) from the driver's JSON lines: medians per server
and scenario, and ours as a ratio of each reference."""

import json
import statistics
import sys
from collections import defaultdict

servers = ["ours", "rmcp-tuned", "rmcp-example", "floor"]
runs = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    row = json.loads(line)
    key = (row["server"], row["scenario"])
    if row["scenario"] not in order:
        order.append(row["scenario"])
    if row["data"]:
        runs[key].append(row["data"])


def median(server, scenario, field):
    values = [run[field] for run in runs[(server, scenario)]]
    return statistics.median(values) if values else None


def show(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"


def ratio(ours, other):
    return "-" if ours is None or other in (None, 0) else f"{ours / other:.2f}"


if any(server != "ours" and run for (server, _), run in runs.items() if server in servers):
    print("| scenario | metric | ours | rmcp tuned | rmcp example | floor | ours / rmcp tuned | ours / floor |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for scenario in order:
        metrics = [("cpu_us_per_request", "server CPU µs/request"), ("rps", "requests/s"), ("p50_us", "p50 µs"), ("p99_us", "p99 µs"), ("peak_rss_kib", "peak RSS KiB")]
        if scenario.startswith("start-up"):
            metrics = [("startup_ms", "ms to the first response"), ("peak_rss_kib", "peak RSS KiB")]
        for field, label in metrics:
            values = [median(server, scenario, field) for server in servers]
            digits = 0 if field in ("rps", "peak_rss_kib") else (2 if field in ("cpu_us_per_request", "startup_ms") else 1)
            cells = [show(v, digits) for v in values]
            print(f"| {scenario} | {label} | " + " | ".join(cells) + f" | {ratio(values[0], values[1])} | {ratio(values[0], values[3])} |")


def mount_table(placed, title, compared):
    """A table of the mount's rows recorded as `mounted` + `placed`: the front server's CPU
    per call, which is what the mount adds, against a relay that does the least a mount
    must (`floor-relay` + `placed`, on the same machine in the same run); then the columns
    `compared`, each a heading and the server, field and digits of its cell."""
    front_server, relay_server = "mounted" + placed, "floor-relay" + placed
    scenarios = [scenario for scenario in order if runs[(front_server, scenario)]]
    if not scenarios:
        return
    headings = ["front server CPU µs/call (added)", "a bare relay's CPU µs/call (the floor)", "ours / the relay"]
    headings += [heading for heading, _, _, _ in compared]
    print()
    print(f"| {title} | " + " | ".join(headings) + " |")
    print("|" + " --- |" * (len(headings) + 1))
    for scenario in scenarios:
        front = median(front_server, scenario, "cpu_us_per_request")
        relay = median(relay_server, scenario, "cpu_us_per_request")
        cells = [show(front, 2), show(relay, 2), ratio(front, relay)]
        cells += [show(median(server, scenario, field), digits) for _, server, field, digits in compared]
        print(f"| {scenario} | " + " | ".join(cells) + " |")


# Through a mount, as the machine places the processes: latency and throughput against
# calling the upstream (ours) directly.
mount_table("", "scenario, through a mount", [
    ("p50 µs direct", "ours", "p50_us", 1),
    ("p50 µs through the mount", "mounted", "p50_us", 1),
    ("requests/s direct", "ours", "rps", 0),
    ("requests/s through the mount", "mounted", "rps", 0),
])
# The same with every process of a row on one CPU: no idle CPU to wake on each hop.
PINNED = " on one CPU"
mount_table(PINNED, "scenario, through a mount, every process on one CPU", [
    ("p50 µs through the mount", "mounted" + PINNED, "p50_us", 1),
    ("p50 µs through the relay", "floor-relay" + PINNED, "p50_us", 1),
])

# What the machine charges for waking a process and being woken back, with no server.
trips = [scenario for scenario in order if runs[("machine", scenario)]]
if trips:
    print()
    print("| with no server at all | CPU µs per round trip, the sender | the echoing child | µs per round trip |")
    print("| --- | --- | --- | --- |")
    for scenario in trips:
        cells = [
            show(median("machine", scenario, "cpu_us_per_round_trip"), 2),
            show(median("machine", scenario, "child_cpu_us_per_round_trip"), 2),
            show(median("machine", scenario, "us_per_round_trip"), 2),
        ]
        print(f"| {scenario} | " + " | ".join(cells) + " |")

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


# Through a mount: the front server's CPU per call is what the mount adds, against a relay
# that does the least a mount must (the floor of a mount, on the same machine in the same
# run); latency against calling the upstream (ours) directly.
mounted = [scenario for scenario in order if runs[("mounted", scenario)]]
if mounted:
    print()
    print("| scenario, through a mount | front server CPU µs/call (added) | a bare relay's CPU µs/call (the floor) | ours / the relay | p50 µs direct | p50 µs through the mount | requests/s direct | requests/s through the mount |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for scenario in mounted:
        front = median("mounted", scenario, "cpu_us_per_request")
        relay = median("floor-relay", scenario, "cpu_us_per_request")
        cells = [
            show(front, 2),
            show(relay, 2),
            ratio(front, relay),
            show(median("ours", scenario, "p50_us")),
            show(median("mounted", scenario, "p50_us")),
            show(median("ours", scenario, "rps"), 0),
            show(median("mounted", scenario, "rps"), 0),
        ]
        print(f"| {scenario} | " + " | ".join(cells) + " |")

# The same with every process of a row on one CPU: no idle CPU to wake on each hop.
PINNED = " on one CPU"
pinned = [scenario for scenario in order if runs[("mounted" + PINNED, scenario)]]
if pinned:
    print()
    print("| scenario, through a mount, every process on one CPU | front server CPU µs/call (added) | a bare relay's CPU µs/call (the floor) | ours / the relay | p50 µs through the mount | p50 µs through the relay |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scenario in pinned:
        front = median("mounted" + PINNED, scenario, "cpu_us_per_request")
        relay = median("floor-relay" + PINNED, scenario, "cpu_us_per_request")
        cells = [
            show(front, 2),
            show(relay, 2),
            ratio(front, relay),
            show(median("mounted" + PINNED, scenario, "p50_us")),
            show(median("floor-relay" + PINNED, scenario, "p50_us")),
        ]
        print(f"| {scenario} | " + " | ".join(cells) + " |")

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

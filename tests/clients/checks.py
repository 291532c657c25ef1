"""What the Python client scripts share: checks that are counted and printed one per line,
the closing summary, a free port on 127.0.0.1, and one of our servers started over HTTP on
a port it picks."""

import os
import socket
import subprocess
import sys
import threading
import time

_counts = {"passed": 0, "failed": 0}


def check(label, condition, detail=""):
    """Counts and prints one check; a failure does not stop the run."""
    if condition:
        _counts["passed"] += 1
        print(f"passed   {label}")
    else:
        _counts["failed"] += 1
        print(f"FAILED   {label} {detail}")


def finish(name):
    """Prints "NAME: N passed, N failed" and exits 1 when a check failed."""
    print(f"{name}: {_counts['passed']} passed, {_counts['failed']} failed")
    sys.exit(1 if _counts["failed"] else 0)


_LOWEST_PORT = 10000
_handed_out = set()


def _ephemeral_start():
    """The first port of the system's ephemeral range (Linux's default when unreadable)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as range_file:
            return int(range_file.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    """A port free on 127.0.0.1 now, for a server that must be named before it starts. It is
    taken below the system's ephemeral range, from which every outgoing connection takes its
    local port (one free now could be a connection's the next moment, and the server meant
    for it would not start), and never handed out twice by this process."""
    end = _ephemeral_start()
    if end - _LOWEST_PORT < 1000:
        # No room below the range on this system: a port of the range, free now.
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]
    span = end - _LOWEST_PORT
    # Each process starts at a place of its own drawn from its pid (a multiplicative hash's
    # high bits: consecutive pids land far apart), so processes side by side do not hand
    # out the same ports.
    start = ((os.getpid() * 2654435761) % 2**32) * span >> 32
    for step in range(span):
        port = _LOWEST_PORT + (start + step) % span
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port on 127.0.0.1 between {_LOWEST_PORT} and {end}")


class NotServing(Exception):
    """A server ended before it served (its port was taken, say), or did not serve in time."""


# How long a test waits for what must happen (the Rust tests' patience, from the same
# variable): a server of a machine kept busy by other work may take that long to start.
# Whole seconds above zero, as the Rust tests read it; anything else stops the script.
def _patience():
    text = os.environ.get("TOOL_TESTS_PATIENCE_SECS", "30")
    if not text.strip().isdigit() or int(text) == 0:
        raise SystemExit(f"TOOL_TESTS_PATIENCE_SECS is a whole number of seconds above 0, "
                         f"not {text!r}")
    return float(int(text))


PATIENCE = _patience()


def wait_for_port(port, process):
    """Waits until a server listens on 127.0.0.1:`port`; raises `NotServing` when
    `process`, the server, ends first or when nothing listens within `PATIENCE`."""
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            pass
        if process.poll() is not None:
            raise NotServing(f"the server meant for port {port} ended before it listened "
                             f"(exit status {process.returncode}): {process.args}\n"
                             f"{last_lines(process)}")
        if time.monotonic() > deadline:
            raise NotServing(f"nothing listened on 127.0.0.1:{port} within {PATIENCE:.0f} s: "
                             f"{process.args}\n{last_lines(process)}")
        time.sleep(0.05)


def last_lines(process, count=10):
    """The last `count` lines `process` logged, as kept by `start` (none when not kept)."""
    return "".join(getattr(process, "log_lines", [])[-count:])


def serve_http(command, port=0):
    """Starts one of our servers, `command` followed by `--http 127.0.0.1:PORT`. With port 0
    (the default) it binds a port the system picks, none another process can take first;
    a port chosen up front may be taken, and then `NotServing` is raised. The process and
    the port it says on stderr it serves on, once it listens. Its log is kept as it comes:
    `server_log(server)` gives it whole once the process has ended."""
    server = subprocess.Popen([*command, "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    server.log_lines = []
    marker = "serving MCP over HTTP at http://127.0.0.1:"
    for line in server.stderr:
        server.log_lines.append(line)
        if marker in line:
            port = int(line.split(marker, 1)[1].split("/", 1)[0])
            server.log_reader = threading.Thread(target=_keep_log, args=(server,), daemon=True)
            server.log_reader.start()
            return server, port
    server.wait()
    raise NotServing(f"{command[0]} did not start serving (exit status {server.returncode})")


def _keep_log(server):
    for line in server.stderr:
        server.log_lines.append(line)


def server_log(server):
    """What a server `serve_http` started wrote on stderr, once it has ended."""
    server.log_reader.join(timeout=10)
    return "".join(server.log_lines)


if __name__ == "__main__":
    # `python3 checks.py N`: N distinct free ports, for a shell script.
    print(*(free_port() for _ in range(int(sys.argv[1]))))

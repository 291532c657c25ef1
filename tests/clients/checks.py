"""What the Python client scripts share: checks that are counted and printed one per line,
the closing summary, and a free port on 127.0.0.1."""

import socket
import sys
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


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port):
    """Waits (up to 10 s) until a server listens on 127.0.0.1:`port`."""
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)

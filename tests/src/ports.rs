//! Ports chosen up front, for what a test must name before it starts (the replicas a
//! balancer's configuration lists, a Redis, the balancer itself), taken where no outgoing
//! connection can take them first.

use std::sync::atomic::{AtomicU16, Ordering};

/// The lowest port handed out: above the well-known and most registered services' ports.
const LOWEST: u16 = 10_000;

/// The first port of the system's ephemeral range when it cannot be read (Linux's default).
const EPHEMERAL_DEFAULT: u16 = 32_768;

/// A port free on 127.0.0.1 now, not handed out before by this test binary.
///
/// It is taken below the system's ephemeral range (`net.ipv4.ip_local_port_range`), never
/// from it: every outgoing connection takes its local port from that range, and the tests
/// open thousands, so a port of that range that is free now can be the local end of a
/// connection the next moment, and the server that was to bind it then fails to start (a
/// balancer that never comes up). Below the range only a listener can take a port, and
/// each one is handed out once. A server the test starts itself binds port 0 instead and
/// says which port it got ([`crate::spawn_http`]).
pub fn free_port() -> u16 {
    // Each test process starts at a place of its own, drawn from its process id: one
    // does not reuse the ports of a server another left behind, and processes running side
    // by side (a test runner that gives each test its own process) do not hand out the
    // same ports. Consecutive process ids land far apart (the high bits of a
    // multiplicative hash, scaled to the span), not on neighbouring ports whose sequences
    // would overlap.
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let end = ephemeral_start();
    let span = end.saturating_sub(LOWEST);
    if span < 1_000 {
        // No room below the range on this system: a port of the range, free now.
        return any_free_port();
    }
    let hash = std::process::id().wrapping_mul(2_654_435_761);
    let offset = (u64::from(hash) * u64::from(span)) >> 32;
    for _ in 0..span {
        let step = u64::from(NEXT.fetch_add(1, Ordering::Relaxed));
        // In u64: with a range starting above 32768 the sum would not fit a u16.
        let port = LOWEST + ((offset + step) % u64::from(span)) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 between {LOWEST} and {end}")
}

/// A port of the ephemeral range the system says is free now.
fn any_free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
    listener.local_addr().expect("a bound address").port()
}

/// The first port of the system's ephemeral range.
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(EPHEMERAL_DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_and_never_handed_out_twice() {
        let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
        let end = ephemeral_start();
        assert!(
            ports.iter().all(|port| (LOWEST..end).contains(port)),
            "{ports:?}"
        );
        let distinct: std::collections::BTreeSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
    }
}

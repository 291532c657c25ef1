//! Who a request is from behind a proxy: the address the proxy names (`Forwarded`, else
//! `X-Forwarded-For`), believed only when the request comes from a proxy the server was
//! told to trust. Rate limits, budgets and the audit trail key on it; without trusted
//! proxies, the peer of the connection is the client, whatever the headers say (anyone can
//! write them).

use axum::http::HeaderMap;
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};

/// The client of a request that came from `peer` with `headers`, given the `trusted`
/// proxies: walking the chain of forwarded addresses from the nearest, the first that is
/// not a trusted proxy (the leftmost when all are).
pub(super) fn client_address(
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    trusted: &[IpNet],
) -> Option<SocketAddr> {
    let peer = peer?;
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer.ip()) {
        return Some(peer);
    }
    let chain = forwarded_for(headers);
    let client = chain
        .iter()
        .rev()
        .find(|ip| !is_trusted(ip))
        .or_else(|| chain.first())
        .copied();
    Some(client.map_or(peer, |ip| SocketAddr::new(ip, 0)))
}

/// The addresses a request was forwarded for, farthest first: from `Forwarded` (its `for=`
/// parameters) when present, else from `X-Forwarded-For`. Obfuscated or unknown names are
/// skipped.
fn forwarded_for(headers: &HeaderMap) -> Vec<IpAddr> {
    let forwarded: Vec<&str> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|value| value.split(','))
            .flat_map(|element| element.split(';'))
            .filter_map(|pair| {
                let (key, value) = pair.trim().split_once('=')?;
                key.eq_ignore_ascii_case("for").then(|| address(value))?
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(address)
        .collect()
}

/// One address as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `"[2001:db8::1]:4711"`,
/// `2001:db8::1`.
fn address(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(socket) = text.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    let bracketed = text.strip_prefix('[')?.split(']').next()?;
    bracketed.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_anyone_else_is_the_client() {
        let proxy: SocketAddr = "10.0.0.2:5000".parse().unwrap();
        let trusted: Vec<IpNet> = vec!["10.0.0.0/24".parse().unwrap()];
        let spoofed = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7")]);
        // From the trusted proxy: the nearest address that is not a trusted proxy.
        let client = client_address(Some(proxy), &spoofed, &trusted).unwrap();
        assert_eq!(client.ip().to_string(), "198.51.100.7");
        // From anyone else, the headers say nothing.
        let stranger: SocketAddr = "192.0.2.5:6000".parse().unwrap();
        assert_eq!(
            client_address(Some(stranger), &spoofed, &trusted),
            Some(stranger)
        );
        // With no proxy trusted, neither.
        assert_eq!(client_address(Some(proxy), &spoofed, &[]), Some(proxy));
        // Forwarded wins over X-Forwarded-For, with its quoting and ports.
        let both = headers(&[
            (
                "forwarded",
                r#"for="[2001:db8::1]:4711";proto=https, for=10.0.0.3"#,
            ),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        let client = client_address(Some(proxy), &both, &trusted).unwrap();
        assert_eq!(client.ip().to_string(), "2001:db8::1");
        // Nothing forwarded: the proxy itself.
        assert_eq!(
            client_address(Some(proxy), &HeaderMap::new(), &trusted),
            Some(proxy)
        );
    }
}

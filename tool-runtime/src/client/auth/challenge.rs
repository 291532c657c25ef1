//! A server's `Bearer` (or `DPoP`) challenge, read from its `WWW-Authenticate` header
//! (RFC 6750, RFC 9449, with RFC 9728's `resource_metadata`): why it refused, the scopes it
//! wants, where its protected-resource metadata is. The header's grammar (RFC 9110 auth-params, quoted
//! strings and escapes) is `http-auth`'s to parse.

/// What a `Bearer` or `DPoP` challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// Whether it is a `DPoP` challenge (a token bound to the client's key is wanted).
    pub dpop: bool,
    /// The error code (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
    /// Its human-readable description.
    pub error_description: Option<String>,
    /// The scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// The URL of the server's protected-resource metadata.
    pub resource_metadata: Option<String>,
}

impl Challenge {
    /// The `Bearer` or `DPoP` challenge among the `WWW-Authenticate` header values
    /// `headers` (the first of them), if one can be read. Challenges of other schemes are
    /// skipped; a header that does not parse gives the challenges before the fault.
    pub fn from_headers<'a>(headers: impl IntoIterator<Item = &'a str>) -> Option<Challenge> {
        for header in headers {
            for parsed in http_auth::parser::ChallengeParser::new(header) {
                let Ok(challenge) = parsed else { break };
                let dpop = challenge.scheme.eq_ignore_ascii_case("dpop");
                if !dpop && !challenge.scheme.eq_ignore_ascii_case("bearer") {
                    continue;
                }
                let mut found = Challenge {
                    dpop,
                    ..Challenge::default()
                };
                for (name, value) in &challenge.params {
                    let value = Some(value.to_unescaped());
                    match name.to_ascii_lowercase().as_str() {
                        "error" => found.error = value,
                        "error_description" => found.error_description = value,
                        "scope" => found.scope = value,
                        "resource_metadata" => found.resource_metadata = value,
                        _ => {}
                    }
                }
                return Some(found);
            }
        }
        None
    }

    /// The scopes it names, one by one.
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_gives_its_error_scope_and_metadata() {
        let header = r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp", error_description="needs \"write\"""#;
        let challenge = Challenge::from_headers([header]).unwrap();
        assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(challenge.scopes(), ["mcp:read", "mcp:write"]);
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            challenge.error_description.as_deref(),
            Some(r#"needs "write""#)
        );
    }

    #[test]
    fn other_schemes_are_skipped_and_a_bare_bearer_is_a_challenge_without_params() {
        let challenge = Challenge::from_headers([r#"Basic realm="x", Bearer"#]).unwrap();
        assert_eq!(challenge, Challenge::default());
        let second = Challenge::from_headers([r#"Basic realm="x""#, "Bearer scope=a"]).unwrap();
        assert_eq!(second.scopes(), ["a"]);
        assert_eq!(Challenge::from_headers([r#"Basic realm="x""#]), None);
        assert_eq!(Challenge::from_headers(["Bearer error="]), None);
    }
}

//! Finding who authorizes a server: its protected-resource metadata (RFC 9728; where its
//! challenge says, else at the well-known paths), checked to be about this server; then
//! the authorization server's metadata (RFC 8414, or OpenID discovery), taken only when it
//! names the issuer it was looked up for, compared as the exact strings they are. A server
//! of the first authorization specification (2025-03-26) publishes no resource metadata:
//! its own origin is the authorization server, with default endpoints when it publishes no
//! metadata either.

use super::web::Web;
use oauth2::url::Url;
use serde_json::Value;

/// What the MCP server says of itself as a protected resource.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// The resource's identifier: what authorization and token requests name (RFC 8707).
    pub(crate) id: String,
    /// Its authorization server's issuer, as written.
    pub(crate) issuer: String,
    /// The scopes it says it supports.
    pub(crate) scopes_supported: Vec<String>,
    /// Whether it published metadata (false: a server of the first specification).
    pub(crate) published: bool,
}

/// What an authorization server says of itself.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Issuer {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) auth_methods: Vec<String>,
    pub(crate) client_id_metadata_documents: bool,
    pub(crate) iss_parameter: bool,
    /// Whether it binds tokens to proofs signed with ES256 (DPoP).
    pub(crate) dpop_es256: bool,
}

/// The resource metadata of the MCP server at `endpoint`, from `hinted` (its challenge's
/// `resource_metadata`) or the well-known paths; when it publishes none, what a server of
/// the first specification implies (its origin authorizes it).
pub(crate) async fn resource(
    web: &Web,
    endpoint: &str,
    hinted: Option<&str>,
) -> Result<Resource, String> {
    let endpoint_url =
        Url::parse(endpoint).map_err(|error| format!("the MCP URL {endpoint}: {error}"))?;
    let mut candidates = Vec::new();
    if let Some(hinted) = hinted {
        candidates.push(hinted.to_owned());
    }
    let origin = origin_of(&endpoint_url);
    let path = endpoint_url.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for candidate in candidates {
        let reply = web
            .get(&candidate)
            .await
            .map_err(|error| format!("the resource metadata at {candidate}: {error}"))?;
        let Some(document) = reply.json() else {
            continue;
        };
        let id = document["resource"]
            .as_str()
            .ok_or_else(|| format!("the resource metadata at {candidate} names no resource"))?;
        check_resource(id, &endpoint_url)?;
        let issuer = document["authorization_servers"]
            .get(0)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                format!("the resource metadata at {candidate} names no authorization server")
            })?;
        return Ok(Resource {
            id: id.to_owned(),
            issuer: issuer.to_owned(),
            scopes_supported: strings(&document["scopes_supported"]),
            published: true,
        });
    }
    // No metadata: the first specification's server, its own authorization server.
    Ok(Resource {
        id: canonical(&endpoint_url),
        issuer: origin,
        scopes_supported: Vec::new(),
        published: false,
    })
}

/// Refuses metadata about another resource than the MCP server at `endpoint`: it must be
/// of the same origin, and its path the endpoint's or a parent of it.
fn check_resource(id: &str, endpoint: &Url) -> Result<(), String> {
    let resource =
        Url::parse(id).map_err(|error| format!("the resource {id:?} is no URL: {error}"))?;
    let same_origin = resource.origin() == endpoint.origin();
    let parent = resource.path().trim_end_matches('/');
    let path = endpoint.path().trim_end_matches('/');
    let covers = path == parent || path.starts_with(&format!("{parent}/"));
    if same_origin && covers {
        Ok(())
    } else {
        Err(format!(
            "the server's resource metadata is about {id}, not {endpoint}: it is not used"
        ))
    }
}

/// The metadata of the authorization server the resource names, which must name that
/// issuer itself. A server of the first specification (no resource metadata) is its own
/// authorization server: its metadata is taken as it is, and without any, its default
/// endpoints.
pub(crate) async fn issuer(web: &Web, resource: &Resource) -> Result<Issuer, String> {
    let issuer = resource.issuer.as_str();
    let url = Url::parse(issuer)
        .map_err(|error| format!("the authorization server {issuer:?} is no URL: {error}"))?;
    let origin = origin_of(&url);
    let path = url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for candidate in &candidates {
        let reply = web.get(candidate).await.map_err(|error| {
            format!("the authorization server metadata at {candidate}: {error}")
        })?;
        let Some(document) = reply.json() else {
            continue;
        };
        let named = document["issuer"].as_str().unwrap_or_default();
        // A server of the first specification named no issuer to hold its metadata to:
        // its origin is where the metadata is, whatever issuer that names.
        if named != issuer && resource.published {
            return Err(format!(
                "the authorization server metadata at {candidate} is of issuer {named:?}, not \
                 {issuer:?}: none of its endpoints is used"
            ));
        }
        return read_issuer(&document, candidate);
    }
    if !resource.published {
        return Ok(Issuer {
            issuer: issuer.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            scopes_supported: Vec::new(),
            auth_methods: Vec::new(),
            client_id_metadata_documents: false,
            iss_parameter: false,
            dpop_es256: false,
        });
    }
    Err(format!(
        "the authorization server {issuer} publishes no metadata (looked at {})",
        candidates.join(", ")
    ))
}

fn read_issuer(document: &Value, at: &str) -> Result<Issuer, String> {
    let text = |key: &str| document[key].as_str().map(str::to_owned);
    Ok(Issuer {
        issuer: text("issuer").unwrap_or_default(),
        authorization_endpoint: text("authorization_endpoint"),
        token_endpoint: text("token_endpoint").ok_or_else(|| {
            format!("the authorization server metadata at {at} names no token endpoint")
        })?,
        registration_endpoint: text("registration_endpoint"),
        scopes_supported: strings(&document["scopes_supported"]),
        auth_methods: strings(&document["token_endpoint_auth_methods_supported"]),
        client_id_metadata_documents: document["client_id_metadata_document_supported"]
            .as_bool()
            .unwrap_or(false),
        iss_parameter: document["authorization_response_iss_parameter_supported"]
            .as_bool()
            .unwrap_or(false),
        dpop_es256: strings(&document["dpop_signing_alg_values_supported"])
            .iter()
            .any(|algorithm| algorithm == "ES256"),
    })
}

/// `scheme://host[:port]`, as a URL's origin is written (no trailing slash).
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The canonical URI of an MCP endpoint, as a resource parameter names it: no fragment,
/// no query, no trailing slash.
pub(crate) fn canonical(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.set_query(None);
    url.as_str().trim_end_matches('/').to_owned()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_covers_its_own_endpoint_and_those_under_it_only() {
        let endpoint = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(check_resource("http://localhost:3000/mcp", &endpoint).is_ok());
        assert!(check_resource("http://localhost:3000", &endpoint).is_ok());
        assert!(check_resource("http://localhost:3000/", &endpoint).is_ok());
        assert!(check_resource("https://evil.example.com/mcp", &endpoint).is_err());
        assert!(check_resource("http://localhost:3001/mcp", &endpoint).is_err());
        assert!(check_resource("http://localhost:3000/mc", &endpoint).is_err());
        assert!(check_resource("http://localhost:3000/mcp/deeper", &endpoint).is_err());
    }

    #[test]
    fn the_canonical_uri_has_no_fragment_query_or_trailing_slash() {
        let url = Url::parse("https://Example.com/mcp/?x=1#part").unwrap();
        assert_eq!(canonical(&url), "https://example.com/mcp");
    }
}

//! The fixture's credentials for the suite's authorization scenarios: OAuth with the
//! scenario's client where it gives one (pre-registered, or its own for client
//! credentials), a workload's identity token or a person's ID token where it gives one,
//! the suite's client metadata document URL otherwise, and a "person" who authorizes at
//! once: the authorization page is fetched and its redirect followed to the
//! client's loopback receiver, as a browser would.

use serde_json::Value;
use tool_runtime::client::auth::{KeyAlgorithm, Loopback, OAuth};

/// The client metadata document URL the suite expects a client to use where the
/// authorization server accepts one.
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// The credentials for a scenario with `context`.
pub(crate) fn credentials(context: &Value) -> OAuth {
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let mut oauth = OAuth::builder()
        .client_name("tool-runtime conformance client")
        .client_metadata_document(METADATA_DOCUMENT);
    if let Some(id) = text("client_id") {
        oauth = oauth.client_id(id);
    }
    if let Some(secret) = text("client_secret") {
        oauth = oauth.client_secret(secret);
    }
    let scenario = text("name").unwrap_or_default();
    // A workload's identity token vouches for the client.
    if let Some(assertion) = text("valid_jwt") {
        return oauth.jwt_bearer(assertion).build();
    }
    // A person signed in at their organisation's identity provider.
    if let (Some(endpoint), Some(id_token)) = (text("idp_token_endpoint"), text("idp_id_token")) {
        return oauth
            .enterprise_identity(endpoint, text("idp_client_id"), id_token)
            .build();
    }
    if scenario.starts_with("auth/client-credentials") {
        if let Some(key) = text("private_key_pem") {
            let algorithm = match text("signing_algorithm").as_deref() {
                Some("RS256") => KeyAlgorithm::Rs256,
                Some("ES384") => KeyAlgorithm::Es384,
                Some("EdDSA") => KeyAlgorithm::EdDsa,
                _ => KeyAlgorithm::Es256,
            };
            oauth = oauth.private_key_jwt(key, algorithm);
        }
        return oauth.client_credentials().build();
    }
    oauth
        .authorization_code(Loopback::new().open_with(browse))
        .build()
}

/// What a browser does with the authorization page here: the authorization server
/// answers with a redirect at once, which is followed back to the loopback receiver.
async fn browse(url: String) {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(5))
        .build()
        .expect("an HTTP client");
    if let Err(error) = browser.get(&url).send().await {
        eprintln!("the authorization page {url} could not be visited: {error}");
    }
}

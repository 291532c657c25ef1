//! What an earlier run kept, taken up: its registrations where they still fit and its
//! tokens where the client can still use them (a newer one another run kept preferred to a
//! refresh); and what this run gets, kept for the next.

use super::{Held, Inner, Known, State};
use crate::client::auth::discovery::Issuer;
use crate::client::auth::grant::{Identity, Method};
use crate::client::auth::kept::{KeptIdentity, KeptToken};
use crate::client::auth::settings::Grant;
use oauth2::url::Url;
use std::time::Instant;

impl Inner {
    /// Reads what an earlier run kept, once; then takes up the token it had for
    /// `endpoint`, when none is held and the client can use it as it is configured now.
    pub(super) fn take_up_kept(&self, state: &mut State, endpoint: &str) -> Result<(), String> {
        self.read_kept(state)?;
        if state.held.contains_key(endpoint) {
            return Ok(());
        }
        let token = state
            .kept
            .as_mut()
            .and_then(|kept| kept.tokens.remove(endpoint));
        if let Some(token) = token {
            self.hold_kept(state, endpoint, token);
        }
        Ok(())
    }

    /// Holds `token`, kept for `endpoint`, when the client can use it as it is configured
    /// now; whether it does.
    fn hold_kept(&self, state: &mut State, endpoint: &str, token: KeptToken) -> bool {
        let Some(known) = self.kept_token_identity(&token) else {
            return false;
        };
        state
            .requested
            .entry(endpoint.to_owned())
            .or_default()
            .extend(token.scopes.iter().cloned());
        state
            .held
            .insert(endpoint.to_owned(), held_from(token, known));
        true
    }

    /// Reads what an earlier run kept, unless it was read already.
    fn read_kept(&self, state: &mut State) -> Result<(), String> {
        if let (Some(file), None) = (&self.kept, &state.kept) {
            state.kept = Some(file.read()?);
        }
        Ok(())
    }

    /// Takes up the token kept for `endpoint` when another run has kept a newer one than
    /// the one held, still good; whether it did.
    pub(super) fn adopt_newer_kept(&self, state: &mut State, endpoint: &str) -> bool {
        let (Some(file), Some(held)) = (&self.kept, state.held.get(endpoint)) else {
            return false;
        };
        let Ok(mut kept) = file.read() else {
            return false;
        };
        let Some(token) = kept.tokens.remove(endpoint) else {
            return false;
        };
        let tokens = token.tokens();
        let good = tokens.expires.is_none_or(|at| Instant::now() < at);
        good && tokens.access != held.tokens.access && self.hold_kept(state, endpoint, token)
    }

    /// Keeps the token held for `endpoint`, and the registration it was had with, when
    /// credentials are kept; a failure to write is logged: the token is still good in this
    /// run.
    pub(super) async fn keep(&self, state: &State, endpoint: &str) {
        let (Some(file), Some(held)) = (&self.kept, state.held.get(endpoint)) else {
            return;
        };
        let Some(grant) = self.settings.grant().kept_as() else {
            return;
        };
        let token_endpoint = held.issuer.token_endpoint.as_str();
        let mut identity =
            KeptIdentity::of(&held.identity, grant, token_endpoint, held.redirect.clone());
        // A client configured here is configured again in the next run: its secret is not
        // written down, and it is no registration.
        if !held.registered {
            identity.forget_secret();
        }
        let scopes = state
            .requested
            .get(endpoint)
            .map(|scopes| scopes.iter().cloned().collect())
            .unwrap_or_default();
        let token = KeptToken::of(
            &held.tokens,
            &held.issuer,
            &held.issuer_key,
            identity.clone(),
            &held.resource,
            scopes,
        );
        let registration = held.registered.then(|| (held.issuer_key.clone(), identity));
        let endpoint = endpoint.to_owned();
        let updated = file
            .update_aside(move |kept| {
                if let Some((issuer, identity)) = registration {
                    kept.registrations.insert(issuer, identity);
                }
                match token {
                    Some(token) => kept.tokens.insert(endpoint, token),
                    None => kept.tokens.remove(&endpoint),
                };
            })
            .await;
        if let Err(why) = updated {
            tracing::warn!(%why, "OAuth credentials were not kept for the next run");
        }
    }

    /// Forgets the token kept for `endpoint` (it could not be refreshed).
    pub(super) async fn forget_kept_token(&self, endpoint: &str) {
        let Some(file) = &self.kept else { return };
        let endpoint = endpoint.to_owned();
        let forgotten = file
            .update_aside(move |kept| {
                kept.tokens.remove(&endpoint);
            })
            .await;
        if let Err(why) = forgotten {
            tracing::warn!(%why, "a kept OAuth token that ran out could not be forgotten");
        }
    }

    /// Who a kept token was had as, when the client can be that again: it was had by the
    /// grant configured now, as the configured client (its secret from the settings), else
    /// as the registration kept with it.
    fn kept_token_identity(&self, token: &KeptToken) -> Option<Known> {
        if Some(token.identity.grant.as_str()) != self.settings.grant().kept_as() {
            return None;
        }
        let Some(client_id) = &self.settings.client_id else {
            let identity = token.identity.identity(self.key_method())?;
            return Some(Known {
                identity,
                registered: true,
            });
        };
        if token.identity.client_id() != client_id {
            return None;
        }
        let secret = self.settings.client_secret.clone();
        let identity = Identity {
            client_id: client_id.clone(),
            method: self.method(&token.issuer, secret.is_some(), None),
            secret,
        };
        Some(Known {
            identity,
            registered: false,
        })
    }

    /// The method of the settings' private key, if they have one.
    fn key_method(&self) -> Option<Method> {
        let (key, algorithm) = self.settings.private_key.as_ref()?;
        Some(Method::PrivateKeyJwt {
            key: key.clone(),
            algorithm: algorithm.jwt(),
        })
    }

    /// A registration an earlier run kept at the issuer looked up as `key`, when it still
    /// fits: no client id is configured instead, it was made for the grant configured now
    /// with the token endpoint `issuer` names now, and a person is sent back where it was
    /// registered to send them (on a loopback address, any port: RFC 8252, 7.3).
    pub(super) async fn kept_identity(
        &self,
        state: &mut State,
        key: &str,
        issuer: &Issuer,
    ) -> Result<Option<Identity>, String> {
        self.read_kept(state)?;
        let grant = self.settings.grant();
        let kept = state
            .kept
            .as_ref()
            .and_then(|kept| kept.registrations.get(key));
        let Some(kept) = kept.filter(|_| self.settings.client_id.is_none()) else {
            return Ok(None);
        };
        if Some(kept.grant.as_str()) != grant.kept_as()
            || kept.token_endpoint != issuer.token_endpoint
        {
            return Ok(None);
        }
        if let Grant::AuthorizationCode(authorizer) = &grant {
            let redirect = authorizer.redirect_uri().await?;
            if !kept
                .redirect_uri
                .as_deref()
                .is_some_and(|kept| same_redirect(kept, &redirect))
            {
                return Ok(None);
            }
        }
        Ok(kept.identity(self.key_method()))
    }
}

/// The token `token` holds, had as `known`, held again.
fn held_from(token: KeptToken, known: Known) -> Held {
    Held {
        tokens: token.tokens(),
        redirect: token.identity.redirect_uri.clone(),
        issuer_key: token.issuer_key.clone(),
        issuer: token.issuer,
        identity: known.identity,
        registered: known.registered,
        resource: token.resource,
        refreshed: false,
    }
}

/// Whether a person sent back to `now` lands where a client registered with `kept` is
/// sent: the same URI, or both on the same loopback address and path, whatever their
/// ports (a loopback receiver listens on a port the system picks each run, and the
/// authorization server takes any port there: RFC 8252, 7.3).
fn same_redirect(kept: &str, now: &str) -> bool {
    if kept == now {
        return true;
    }
    let (Ok(kept), Ok(now)) = (Url::parse(kept), Url::parse(now)) else {
        return false;
    };
    let loopback = |url: &Url| url.scheme() == "http" && crate::client::on_this_machine(url);
    loopback(&kept)
        && loopback(&now)
        && kept.host() == now.host()
        && kept.path() == now.path()
        && kept.query() == now.query()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_redirect_fits_on_any_port_and_any_other_only_as_it_is() {
        let kept = "http://127.0.0.1:43111/callback";
        assert!(same_redirect(kept, "http://127.0.0.1:50002/callback"));
        assert!(same_redirect("http://[::1]:1/cb", "http://[::1]:2/cb"));
        assert!(!same_redirect(kept, "http://127.0.0.1:50002/other"));
        assert!(!same_redirect(kept, "http://127.0.0.2:43111/callback"));
        assert!(!same_redirect(
            "https://app.example.com/cb",
            "https://app.example.com:8443/cb"
        ));
        assert!(same_redirect(
            "https://app.example.com/cb",
            "https://app.example.com/cb"
        ));
        assert!(!same_redirect(
            kept,
            "http://evil.example.com:43111/callback"
        ));
    }
}

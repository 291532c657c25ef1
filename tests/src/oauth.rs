//! An authorization server in miniature for the OAuth tests: signing keys made on the spot
//! (Ed25519 and P-256), their JWKS document, and access tokens signed with them. Nothing
//! leaves the process.

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// One signing key of the test authorization server.
pub struct SigningKey {
    /// Its `kid`.
    pub id: String,
    algorithm: Algorithm,
    encoding: EncodingKey,
    /// Its public half, as a JWK.
    pub public_jwk: Value,
}

fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system's randomness");
    bytes
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl SigningKey {
    /// A new Ed25519 key (`EdDSA`).
    pub fn ed25519(id: &str) -> SigningKey {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        let key = ed25519_dalek::SigningKey::from_bytes(&random_bytes());
        let der = key.to_pkcs8_der().expect("a PKCS#8 document");
        SigningKey {
            id: id.to_owned(),
            algorithm: Algorithm::EdDSA,
            encoding: EncodingKey::from_ed_der(der.as_bytes()),
            public_jwk: json!({
                "kty": "OKP", "crv": "Ed25519", "kid": id, "alg": "EdDSA", "use": "sig",
                "x": base64url(key.verifying_key().as_bytes()),
            }),
        }
    }

    /// A new P-256 key (`ES256`), published without an `alg`.
    pub fn p256(id: &str) -> SigningKey {
        use p256::pkcs8::EncodePrivateKey;
        let key = loop {
            if let Ok(key) = p256::SecretKey::from_slice(&random_bytes()) {
                break key;
            }
        };
        let der = key.to_pkcs8_der().expect("a PKCS#8 document");
        let point =
            p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(&key.public_key(), false);
        SigningKey {
            id: id.to_owned(),
            algorithm: Algorithm::ES256,
            encoding: EncodingKey::from_ec_der(der.as_bytes()),
            public_jwk: json!({
                "kty": "EC", "crv": "P-256", "kid": id,
                "x": base64url(point.x().expect("an uncompressed point")),
                "y": base64url(point.y().expect("an uncompressed point")),
            }),
        }
    }

    /// A token with `claims`, signed with this key and naming it.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.algorithm);
        header.kid = Some(self.id.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("a signed token")
    }
}

/// The JWKS document of `keys`.
pub fn jwks(keys: &[&SigningKey]) -> String {
    json!({"keys": keys.iter().map(|key| key.public_jwk.clone()).collect::<Vec<_>>()}).to_string()
}

/// Seconds since the Unix epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs() as i64
}

/// The claims of a good token: from `issuer`, for `audience`, valid for an hour.
pub fn claims(issuer: &str, audience: &str, subject: &str, scope: &str) -> Value {
    json!({
        "iss": issuer, "aud": audience, "sub": subject, "scope": scope,
        "iat": now(), "exp": now() + 3600,
    })
}

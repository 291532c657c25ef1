//! `serve`'s flags for replicas: the store they share, its key prefix, the file of keys
//! that seal request states, and what rate limits do while the store is unreachable.

use crate::mcp::ServerOptions;
use std::path::PathBuf;

/// The flags of a replica behind a load balancer.
#[derive(clap::Args, Clone, Debug, Default)]
pub(super) struct StoreFlags {
    /// Share sessions, tasks, request-state keys, large outputs, rate limits and budgets
    /// with the other replicas through this store: redis://[user[:password]@]host[:port][/db]
    /// or rediss://... (TLS); a Redis Cluster as redis+cluster://host:port[,host:port...]
    /// (or rediss+cluster://). Prefer the environment variable: a password on the command
    /// line is visible to every user of the machine.
    #[arg(long, value_name = "URL", env = "MCP_STORE", hide_env_values = true)]
    store: Option<String>,
    /// The prefix of every key and channel in the store; services sharing one Redis keep
    /// apart by prefix.
    #[arg(
        long,
        value_name = "PREFIX",
        env = "MCP_STORE_PREFIX",
        default_value = "mcp"
    )]
    store_prefix: String,
    /// Seal request states with the keys in this file (one per line, hex or base64, at
    /// least 32 bytes; the first seals, the others are still accepted after a rotation).
    /// Without it, replicas sharing a store share keys it makes and rotates.
    #[arg(long, value_name = "PATH", env = "MCP_STATE_KEY_FILE")]
    state_key_file: Option<PathBuf>,
    /// What rate limits and budgets kept in the store do while it cannot be reached:
    /// admit (calls run unlimited meanwhile) or refuse (calls they apply to are refused).
    #[arg(
        long,
        value_name = "MODE",
        env = "MCP_WHEN_STORE_UNREACHABLE",
        default_value = "admit",
        value_parser = ["admit", "refuse"]
    )]
    when_store_unreachable: String,
    /// How long a replica waits for the store to answer one command before it takes the
    /// store for unreachable; 500ms unless set. A store far away, or shared by busy
    /// machines, may need longer.
    #[arg(long, value_name = "DURATION", env = "MCP_STORE_TIMEOUT", value_parser = super::args::parse_delay)]
    store_timeout: Option<std::time::Duration>,
}

impl StoreFlags {
    /// `options` with the store and keys these flags name, connected.
    pub(super) async fn apply(&self, options: ServerOptions) -> Result<ServerOptions, String> {
        let key = match &self.state_key_file {
            Some(path) => Some(
                crate::store::SealingKey::from_file(path)
                    .map_err(|error| format!("cannot read the sealing keys: {error}"))?,
            ),
            None => None,
        };
        let Some(url) = &self.store else {
            return Ok(match key {
                Some(key) => options.sealing_key(key),
                None => options,
            });
        };
        self.connect(url, key, options).await
    }

    #[cfg(feature = "redis")]
    async fn connect(
        &self,
        url: &str,
        key: Option<crate::store::SealingKey>,
        options: ServerOptions,
    ) -> Result<ServerOptions, String> {
        use crate::store::{Store, WhenUnreachable};
        let mut builder = Store::builder(url)
            .prefix(&self.store_prefix)
            .when_unreachable(match self.when_store_unreachable.as_str() {
                "refuse" => WhenUnreachable::Refuse,
                _ => WhenUnreachable::Admit,
            });
        if let Some(key) = key {
            builder = builder.sealing_key(key);
        }
        if let Some(timeout) = self.store_timeout {
            builder = builder.response_timeout(timeout);
        }
        let store = builder
            .connect()
            .await
            .map_err(|error| format!("cannot use the store: {error}"))?;
        tracing::info!(
            replica = store.replica(),
            prefix = %self.store_prefix,
            "sharing state through the store"
        );
        Ok(options.store(store))
    }

    #[cfg(not(feature = "redis"))]
    async fn connect(
        &self,
        _url: &str,
        _key: Option<crate::store::SealingKey>,
        _options: ServerOptions,
    ) -> Result<ServerOptions, String> {
        Err("this build has no store support (the `redis` feature is off)".to_owned())
    }
}

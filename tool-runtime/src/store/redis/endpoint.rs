//! Where the store is: one Redis (`redis://`), or a Redis Cluster reached through any of its
//! nodes (`redis+cluster://host:port,host:port`), and the connections each kind makes.
//!
//! Keys hold their session's or task's id as the hash tag, every script touches one key,
//! and no pipeline spans two slots, so commands run the same on both. Pub/sub is the one
//! difference: a cluster forwards a `PUBLISH` to every node, but counts only the receivers
//! of the node it reached, and the bus waits for as many acknowledgements as receivers.
//! So every replica subscribes on the same node (the master of the slot of
//! `{<prefix>:bus}`) and publishes there, and the counts are whole again.

use super::StoreError;
use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use ::redis::cluster::{ClusterClient, ClusterClientBuilder};
use ::redis::cluster_async::ClusterConnection;
use ::redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use ::redis::{Cmd, Pipeline, RedisFuture, RedisResult, Value};
use std::time::Duration;

/// How long connecting to one node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The store's address, parsed.
pub(crate) enum Endpoint {
    Single(::redis::Client),
    Cluster(Cluster),
}

/// A Redis Cluster: the nodes to start from, as `redis://` (or `rediss://`) URLs with the
/// credentials.
pub(crate) struct Cluster {
    seeds: Vec<String>,
    /// `redis` or `rediss`.
    scheme: &'static str,
    /// `user:password@`, or empty.
    credentials: String,
}

impl Endpoint {
    /// Reads `url`: `redis://`, `rediss://`, `valkey://`, `valkeys://` for one server;
    /// `redis+cluster://` or `rediss+cluster://` with comma-separated nodes for a cluster.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, StoreError> {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(StoreError::new("the store's URL has no scheme"));
        };
        let scheme = match scheme {
            "redis+cluster" | "valkey+cluster" => "redis",
            "rediss+cluster" | "valkeys+cluster" => "rediss",
            _ => {
                return ::redis::Client::open(url)
                    .map(Endpoint::Single)
                    .map_err(StoreError::new)
            }
        };
        let (credentials, hosts) = match rest.rsplit_once('@') {
            Some((credentials, hosts)) => (format!("{credentials}@"), hosts),
            None => (String::new(), rest),
        };
        let hosts = match hosts.split_once('/') {
            Some((hosts, "" | "0")) => hosts,
            Some((_, db)) => {
                return Err(StoreError::new(format!(
                    "a Redis Cluster has only database 0, and the store's URL names {db}"
                )))
            }
            None => hosts,
        };
        let seeds: Vec<String> = hosts
            .split(',')
            .filter(|host| !host.is_empty())
            .map(|host| format!("{scheme}://{credentials}{host}"))
            .collect();
        if seeds.is_empty() {
            return Err(StoreError::new("the store's URL names no cluster node"));
        }
        Ok(Endpoint::Cluster(Cluster {
            seeds,
            scheme,
            credentials,
        }))
    }

    /// The connection commands share: it reconnects by itself, and a command that fails
    /// fails at once (the request says "retry").
    pub(crate) async fn commands(&self, response_timeout: Duration) -> RedisResult<Commands> {
        match self {
            Endpoint::Single(client) => {
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(response_timeout))
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    // The manager reconnects in the background, with backoff and jitter.
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_secs(2));
                ConnectionManager::new_with_config(client.clone(), config)
                    .await
                    .map(Commands::Single)
            }
            Endpoint::Cluster(cluster) => cluster.connect(response_timeout, 1).await,
        }
    }

    /// A connection of its own, for a blocking read (which would hold up every command
    /// sharing a connection), answered within `response_timeout`.
    pub(crate) async fn blocking(&self, response_timeout: Duration) -> RedisResult<Commands> {
        match self {
            Endpoint::Single(client) => {
                let config = ::redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(response_timeout));
                client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map(Commands::Multiplexed)
            }
            Endpoint::Cluster(cluster) => cluster.connect(response_timeout, 0).await,
        }
    }

    /// The server to subscribe on: the one server, or the node every replica of `prefix`
    /// meets on.
    pub(crate) async fn subscriber(
        &self,
        commands: &mut Commands,
        prefix: &str,
    ) -> RedisResult<::redis::Client> {
        match self {
            Endpoint::Single(client) => Ok(client.clone()),
            Endpoint::Cluster(cluster) => {
                let slot = bus_slot(prefix);
                let slots: Value = ::redis::cmd("CLUSTER")
                    .arg("SLOTS")
                    .query_async(commands)
                    .await?;
                let (host, port) = master_of(&slots, slot).ok_or_else(|| {
                    ::redis::RedisError::from((
                        ::redis::ErrorKind::Client,
                        "no node of the cluster serves the slot of the store's events",
                    ))
                })?;
                ::redis::Client::open(format!(
                    "{}://{}{host}:{port}",
                    cluster.scheme, cluster.credentials
                ))
            }
        }
    }

    /// Publishes `payload` on `channel` where the replicas of `prefix` listen; how many
    /// received it.
    pub(crate) async fn publish(
        &self,
        commands: &mut Commands,
        prefix: &str,
        channel: &str,
        payload: &[u8],
    ) -> RedisResult<u64> {
        let mut publish = ::redis::cmd("PUBLISH");
        publish.arg(channel).arg(payload);
        match commands {
            Commands::Cluster(connection) => {
                let slot = bus_slot(prefix);
                let route = Route::new(slot, SlotAddr::Master);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                let value = connection.route_command(publish, routing).await?;
                Ok(::redis::from_redis_value(value)?)
            }
            other => publish.query_async(other).await,
        }
    }
}

impl Cluster {
    async fn connect(&self, response_timeout: Duration, retries: u32) -> RedisResult<Commands> {
        let client: ClusterClient = ClusterClientBuilder::new(self.seeds.clone())
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(response_timeout)
            .retries(retries)
            .build()?;
        client.get_async_connection().await.map(Commands::Cluster)
    }
}

/// The slot every replica of `prefix` meets on: that of the key `{<prefix>:bus}`.
fn bus_slot(prefix: &str) -> u16 {
    slot_of_tag(&format!("{prefix}:bus"))
}

/// The slot of a key that is all hash tag: CRC16 (XMODEM) of the tag, modulo 16,384, as
/// the cluster specification defines it.
fn slot_of_tag(tag: &str) -> u16 {
    let mut crc: u16 = 0;
    for byte in tag.bytes() {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16_384
}

/// The host and port of the master serving `slot`, from a `CLUSTER SLOTS` answer.
fn master_of(slots: &Value, slot: u16) -> Option<(String, u16)> {
    let Value::Array(ranges) = slots else {
        return None;
    };
    ranges.iter().find_map(|range| {
        let Value::Array(fields) = range else {
            return None;
        };
        let number = |value: &Value| match value {
            Value::Int(n) => u16::try_from(*n).ok(),
            _ => None,
        };
        let (start, end) = (number(fields.first()?)?, number(fields.get(1)?)?);
        if !(start..=end).contains(&slot) {
            return None;
        }
        let Value::Array(master) = fields.get(2)? else {
            return None;
        };
        let host = match master.first()? {
            Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok()?,
            Value::SimpleString(text) => text.clone(),
            _ => return None,
        };
        Some((host, number(master.get(1)?)?))
    })
}

/// A connection to run commands on; clones share it.
#[derive(Clone)]
pub(crate) enum Commands {
    Single(ConnectionManager),
    Multiplexed(::redis::aio::MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Commands {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Commands::Single(connection) => connection.req_packed_command(cmd),
            Commands::Multiplexed(connection) => connection.req_packed_command(cmd),
            Commands::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Commands::Single(connection) => connection.req_packed_commands(pipeline, offset, count),
            Commands::Multiplexed(connection) => {
                connection.req_packed_commands(pipeline, offset, count)
            }
            Commands::Cluster(connection) => {
                connection.req_packed_commands(pipeline, offset, count)
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Commands::Single(connection) => connection.get_db(),
            Commands::Multiplexed(connection) => connection.get_db(),
            Commands::Cluster(connection) => connection.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_urls_name_every_node_with_the_credentials() {
        let Endpoint::Cluster(cluster) =
            Endpoint::parse("rediss+cluster://app:s3cret@a:7000,b:7001/0").unwrap()
        else {
            panic!("a cluster");
        };
        assert_eq!(
            cluster.seeds,
            ["rediss://app:s3cret@a:7000", "rediss://app:s3cret@b:7001"]
        );
        assert!(matches!(
            Endpoint::parse("redis://a:6379/2").unwrap(),
            Endpoint::Single(_)
        ));
        let refused = Endpoint::parse("redis+cluster://a:7000/3").err().unwrap();
        assert!(refused.to_string().contains("database 0"), "{refused}");
        assert!(Endpoint::parse("redis+cluster://").is_err());
    }

    #[test]
    fn slots_are_the_clusters() {
        // The examples of Redis's own documentation of CLUSTER KEYSLOT.
        assert_eq!(slot_of_tag("somekey"), 11058);
        assert_eq!(slot_of_tag("foo"), 12182);
    }
}

#!/usr/bin/env bash
# Compile time of a crate with 200 tools, with tool-runtime and with rmcp: a clean debug
# build (dependencies included), then the debug and the release build after editing one
# tool. Each crate has its own target directory. Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")"
# A scratch directory inside wherever cargo puts its output (CARGO_TARGET_DIR included).
base="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/compile"
runtime="$(cd .. && pwd)/tool-runtime"
tools=200
rm -rf "$base"
# Deleting the last run's gigabytes goes on in the background and slows the first build.
sync
mkdir -p "$base/ours/src" "$base/rmcp/src" "$base/ours-stdio/src" "$base/ours-http/src" \
    "$base/rmcp-http/src"

cat > "$base/ours/Cargo.toml" <<TOML
[package]
name = "ours200"
version = "0.1.0"
edition = "2021"
[dependencies]
tool-runtime = { path = "$runtime" }
[workspace]
TOML
cat > "$base/ours/src/main.rs" <<'RUST'
mod tools;
fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
RUST
{
    for i in $(seq 0 $((tools - 1))); do
        cat <<RUST
/// Tool number $i: adds its arguments and labels the sum.
#[tool_runtime::tool(read_only)]
pub fn tool_$i(
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
    /// A label for the result.
    label: Option<String>,
) -> String {
    format!("{} {}", label.unwrap_or_default(), a + b + /*EDIT*/0)
}
RUST
    done
} > "$base/ours/src/tools.rs"

cat > "$base/rmcp/Cargo.toml" <<'TOML'
[package]
name = "rmcp200"
version = "0.1.0"
edition = "2024"
[dependencies]
rmcp = { version = "=3.9.0", features = ["server", "macros", "transport-io"] }
tokio = { version = "1", features = ["macros", "rt", "io-std"] }
serde = { version = "1", features = ["derive"] }
schemars = "1"
[workspace]
TOML
cat > "$base/rmcp/src/main.rs" <<'RUST'
mod tools;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use std::sync::LazyLock;

#[derive(Clone, Copy, Default)]
pub struct Server;
static ROUTER: LazyLock<ToolRouter<Server>> = LazyLock::new(Server::tool_router);
fn router() -> &'static ToolRouter<Server> {
    &ROUTER
}
#[tool_handler(router = router())]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp200", "0.1.0"))
    }
}
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Server.serve(rmcp::transport::stdio()).await?.waiting().await?;
    Ok(())
}
RUST
{
    cat <<'RUST'
use super::Server;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Args {
    /// First addend.
    pub a: i64,
    /// Second addend.
    pub b: i64,
    /// A label for the result.
    pub label: Option<String>,
}

#[tool_router(vis = "pub(crate)")]
impl Server {
RUST
    for i in $(seq 0 $((tools - 1))); do
        cat <<RUST
    #[tool(description = "Tool number $i: adds its arguments and labels the sum.")]
    fn tool_$i(&self, Parameters(args): Parameters<Args>) -> String {
        format!("{} {}", args.label.unwrap_or_default(), args.a + args.b + /*EDIT*/0)
    }
RUST
    done
    echo "}"
} > "$base/rmcp/src/tools.rs"

# The same crates with other transports, for builds of like capability: ours with stdio
# alone (no command line either) beside rmcp's example, and both with Streamable HTTP (ours:
# the `http` feature besides the defaults).
cp "$base/ours/src/tools.rs" "$base/ours-stdio/src/tools.rs"
sed -e 's/^name = "ours200"/name = "ours200-stdio"/' \
    -e 's|^tool-runtime = { path = "\(.*\)" }|tool-runtime = { path = "\1", default-features = false }\ntokio = { version = "1", features = ["macros", "rt"] }|' \
    "$base/ours/Cargo.toml" > "$base/ours-stdio/Cargo.toml"
cat > "$base/ours-stdio/src/main.rs" <<'RUST'
mod tools;
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::Registry;
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::new(Registry::new()?, ServerInfo::new("ours200", "0.1.0"));
    tool_runtime::transport::stdio::serve_stdio(&server).await?;
    Ok(())
}
RUST
cp "$base/ours/src/tools.rs" "$base/ours-http/src/tools.rs"
cp "$base/ours/src/main.rs" "$base/ours-http/src/main.rs"
sed -e 's/^name = "ours200"/name = "ours200-http"/' \
    -e 's|^tool-runtime = { path = "\(.*\)" }|tool-runtime = { path = "\1", features = ["http"] }|' \
    "$base/ours/Cargo.toml" > "$base/ours-http/Cargo.toml"
cp "$base/rmcp/src/tools.rs" "$base/rmcp-http/src/tools.rs"
cp "$base/rmcp/src/main.rs" "$base/rmcp-http/src/main.rs"
sed -e 's/^name = "rmcp200"/name = "rmcp200-http"/' \
    -e 's/"transport-io"\]/"transport-io", "transport-streamable-http-server"]/' \
    "$base/rmcp/Cargo.toml" > "$base/rmcp-http/Cargo.toml"

# A build that fails stops the script with cargo's output: its time would mean nothing.
seconds() {
    local start end log
    log="$(mktemp)"
    start=$(date +%s.%N)
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "error: '$*' failed in $(pwd)" >&2
        exit 1
    fi
    end=$(date +%s.%N)
    rm -f "$log"
    python3 -c "print(f'{$end - $start:.2f}')"
}
edit() { sed -i "0,/\/\*EDIT\*\/[0-9]*/s//\/*EDIT*\/$RANDOM/" "$1/src/tools.rs"; }

declare -A clean debug release
for framework in ours rmcp; do
    dir="$base/$framework"
    echo "building $framework (clean, debug)" >&2
    clean[$framework]=$(cd "$dir" && seconds cargo build)
    edit "$dir"
    debug[$framework]=$(cd "$dir" && seconds cargo build)
    echo "building $framework (release)" >&2
    (cd "$dir" && cargo build --release >/dev/null 2>&1)
    edit "$dir"
    release[$framework]=$(cd "$dir" && seconds cargo build --release)
done
declare -A parity
for variant in ours-stdio ours-http rmcp-http; do
    echo "building $variant (clean, debug)" >&2
    parity[$variant]=$(cd "$base/$variant" && seconds cargo build)
done
per_tool() { python3 -c "print(f'{$1 * 1000 / $tools:.1f}')"; }
echo "| $tools tools | tool-runtime | rmcp 3.9.0 |"
echo "| --- | --- | --- |"
echo "| clean debug build, dependencies included | ${clean[ours]} s | ${clean[rmcp]} s |"
echo "| debug build after editing one tool | ${debug[ours]} s | ${debug[rmcp]} s |"
echo "| that, per tool | $(per_tool "${debug[ours]}") ms | $(per_tool "${debug[rmcp]}") ms |"
echo "| release build after editing one tool | ${release[ours]} s | ${release[rmcp]} s |"
echo
echo "| clean debug build, like for like | tool-runtime | rmcp 3.9.0 |"
echo "| --- | --- | --- |"
echo "| stdio only (ours: \`default-features = false\`, no command line) | ${parity[ours-stdio]} s | ${clean[rmcp]} s |"
echo "| stdio and Streamable HTTP (ours: \`features = [\"http\"]\`, with the command line) | ${parity[ours-http]} s | ${parity[rmcp-http]} s |"

//! Any JSON as the arguments of a tool with nested types: the call never panics, and it
//! either fails with a message naming what is wrong or passes values that fit the schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use tool_runtime::{tool, Registry};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Circle { radius: f32 },
    Polygon { points: Vec<(i32, i32)> },
    Dot,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    name: String,
    shapes: Vec<Shape>,
    opacity: Option<u8>,
    tags: BTreeMap<String, bool>,
}

/// Draws layers.
#[tool]
fn draw(layers: Vec<Layer>, scale: Option<f64>, #[arg(default = 'x')] marker: char) -> usize {
    let _ = (scale, marker);
    layers.iter().map(|layer| layer.shapes.len()).sum()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry::new().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let result = runtime().block_on(registry().call("draw", arguments));
    if let Some(error) = result.error() {
        let text = error.to_string();
        assert!(text.starts_with("invalid arguments for draw: "), "{text}");
    }
});

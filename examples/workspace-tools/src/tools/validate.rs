//! `validate_output`: checks an agent's output against the types the server knows; warnings
//! never make it invalid.

use serde::Serialize;
use serde_json::Value;
use tool_runtime::tool;

/// The output types this server checks.
pub const OUTPUT_TYPES: [&str; 2] = ["domain_map", "plan"];

/// The verdict.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ValidationResult {
    /// No errors (warnings allowed).
    pub valid: bool,
    /// What makes it invalid.
    pub errors: Vec<String>,
    /// Worth fixing, but not blocking.
    pub warnings: Vec<String>,
}

/// Check an output against a known type: `domain_map` (a `domains` array, a `layout` object
/// and a `summary` object) or `plan` (an `items` array of steps).
///
/// Example: {"outputType": "domain_map", "data": {"domains": [{"name": "billing"}], "layout": {},
///     "summary": {"text": "one domain"}}}
/// Example: {"outputType": "plan", "data": {"items": [
///     {"id": "step-1", "content": "Map domains", "status": "pending"}]}}
#[tool(read_only, idempotent, open_world = false)]
pub fn validate_output(
    /// The type to check against: domain_map or plan.
    #[arg(rename = "outputType")]
    output_type: String,
    /// The output to check.
    data: Value,
) -> Result<ValidationResult, String> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let Some(object) = data.as_object() else {
        errors.push("data must be a JSON object".to_owned());
        return Ok(ValidationResult {
            valid: false,
            errors,
            warnings,
        });
    };
    let known: &[&str] = match output_type.as_str() {
        "domain_map" => {
            match object.get("domains") {
                Some(Value::Array(domains)) => {
                    if domains.is_empty() {
                        warnings.push("'domains' is empty".to_owned());
                    }
                    for (index, domain) in domains.iter().enumerate() {
                        if !domain.get("name").is_some_and(Value::is_string) {
                            warnings.push(format!("domains[{index}] has no 'name' string"));
                        }
                    }
                }
                _ => errors.push("Missing 'domains' array".to_owned()),
            }
            for key in ["layout", "summary"] {
                match object.get(key) {
                    Some(Value::Object(map)) if map.is_empty() => {
                        warnings.push(format!("'{key}' is empty"))
                    }
                    Some(Value::Object(_)) => {}
                    _ => errors.push(format!("Missing '{key}' object")),
                }
            }
            &["domains", "layout", "summary"]
        }
        "plan" => {
            match object.get("items") {
                Some(Value::Array(items)) => {
                    if items.len() > crate::tools::plan::MAX_ITEMS {
                        errors.push(format!(
                            "a plan has at most {} items; got {}",
                            crate::tools::plan::MAX_ITEMS,
                            items.len()
                        ));
                    }
                    let mut running = 0;
                    for (index, item) in items.iter().enumerate() {
                        for field in ["id", "content", "status"] {
                            if !item.get(field).is_some_and(Value::is_string) {
                                errors.push(format!("items[{index}] is missing '{field}'"));
                            }
                        }
                        match item.get("status").and_then(Value::as_str) {
                            Some("pending" | "completed") | None => {}
                            Some("in_progress") => running += 1,
                            Some(other) => errors.push(format!(
                                "items[{index}].status '{other}' is not pending, in_progress or \
                                 completed"
                            )),
                        }
                    }
                    if running > 1 {
                        errors.push("at most one item can be in_progress".to_owned());
                    }
                }
                _ => errors.push("Missing 'items' array".to_owned()),
            }
            &["items", "maxItems", "currentItem"]
        }
        other => {
            return Err(format!(
                "unknown output type '{other}'; known types: {}",
                OUTPUT_TYPES.join(", ")
            ));
        }
    };
    for key in object.keys() {
        if !known.contains(&key.as_str()) {
            warnings.push(format!("unexpected key '{key}'"));
        }
    }
    Ok(ValidationResult {
        valid: errors.is_empty(),
        errors,
        warnings,
    })
}

//! Arguments mirrored in HTTP headers (`#[arg(header = "...")]`): the schema says so with
//! `x-mcp-header`, and the catalog check refuses a type a header cannot say exactly.

use tool_runtime::check::check;
use tool_runtime::Registry;

/// Route a call by weight.
#[tool_runtime::tool]
fn route_by_weight(
    /// The weight, mirrored in a header.
    #[arg(header = "Weight")]
    weight: f64,
    /// The region, mirrored in a header.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("{weight} {region}")
}

#[test]
fn a_header_can_mirror_only_a_string_an_integer_or_a_boolean() {
    let registry = Registry::new().unwrap();
    let tool = registry.get("route_by_weight").unwrap();
    assert_eq!(
        tool.input_schema()["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    let report = check(&[&*tool]);
    let errors: Vec<&str> = report.errors().map(|f| f.message.as_str()).collect();
    assert_eq!(
        errors,
        [
            "parameter `weight` is mirrored in the header Mcp-Param-Weight, but only a string, an \
          integer or a boolean can be; it is number"
        ]
    );
}

//! A registered tool's schemas, built from what the macro wrote for each parameter with the
//! canonical rules of [`schema`](crate::schema).

use super::contract::{ParamKind, ToolDescription};
use super::ParamInfo;
use crate::schema::{self, OutputSchema};
use serde_json::{Map, Value};

/// The schema keyword that says an argument is mirrored in an HTTP header (`Mcp-Param-*`),
/// so gateways can route on it without reading the body.
pub(crate) const HEADER_KEYWORD: &str = "x-mcp-header";

/// The input schema of a macro-registered tool, and what it says of each parameter.
pub(crate) fn input_schema(registration: &ToolDescription) -> (Value, Vec<ParamInfo>) {
    let mut generator = schema::generator_for_input();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params = Vec::with_capacity(registration.params.len());
    for spec in registration.params {
        let default = &spec.default;
        let ParamKind::Argument { schema, optional } = &spec.kind else {
            params.push(ParamInfo {
                name: spec.name.to_owned(),
                description: spec.description.map(str::to_owned),
                required: false,
                injected: true,
                default: None,
                header: None,
            });
            continue;
        };
        let mut property = schema(&mut generator);
        let type_is_optional = optional();
        let default_value = default.and_then(|default_json| default_json());
        let is_required = !type_is_optional && default.is_none();
        if type_is_optional {
            schema::strip_null(&mut property);
        }
        super::limits::apply(&mut property, spec.limits);
        if let Some(description) = spec.description {
            property.insert("description".to_owned(), description.into());
        }
        if let Some(value) = &default_value {
            property.insert("default".to_owned(), value.clone());
        }
        if let Some(header) = spec.header {
            property.insert(HEADER_KEYWORD.to_owned(), header.into());
        }
        properties.insert(spec.name.to_owned(), property.to_value());
        if is_required {
            required.push(Value::from(spec.name));
        }
        params.push(ParamInfo {
            name: spec.name.to_owned(),
            description: spec.description.map(str::to_owned),
            required: is_required,
            injected: false,
            default: default_value,
            header: spec.header.map(str::to_owned),
        });
    }
    let definitions = generator.take_definitions(true);
    (
        schema::object_schema(properties, required, definitions),
        params,
    )
}

/// The output schema of a macro-registered tool, and whether its values are wrapped.
pub(crate) fn output_schema(registration: &ToolDescription) -> Option<OutputSchema> {
    schema::output_schema(registration.output_schema)
}

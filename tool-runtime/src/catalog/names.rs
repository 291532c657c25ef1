//! The tool name rule every provider accepts (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, the
//! intersection of the MCP, OpenAI, Anthropic and Gemini rules) and the rule of the OAuth
//! scopes a tool may require: the same functions `#[tool]` checks at compile time, from the
//! `tool-rules` crate both depend on.

pub(crate) use tool_rules::check_name;

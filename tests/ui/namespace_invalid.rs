//! A namespace becomes the start of tool names, so it follows the tool name rule.

tool_runtime::namespace!("9files");

fn main() {}

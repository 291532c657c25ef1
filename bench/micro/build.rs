//! Generates `#[tool]` functions, to measure catalogs of a realistic large size: 1,000 for
//! the library (`tools.rs`), and 100 of other names for the `ours-100` binary
//! (`tools_100.rs`), so start-up can be shown against the number of tools.

fn tools(prefix: &str, count: usize) -> String {
    let mut source = String::new();
    for i in 0..count {
        source.push_str(&format!(
            "/// Tool number {i}: adds its arguments and labels the sum.\n\
             ///\n\
             /// Example: {{\"a\": 1, \"b\": 2}}\n\
             #[tool_runtime::tool(read_only)]\n\
             pub fn {prefix}_{i:04}(\n\
                 /// First addend.\n\
                 a: i64,\n\
                 /// Second addend.\n\
                 b: i64,\n\
                 /// A label for the result.\n\
                 label: Option<String>,\n\
             ) -> String {{\n\
                 format!(\"{{}} {{}}\", label.unwrap_or_default(), a + b)\n\
             }}\n\n"
        ));
    }
    source
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("tools.rs"), tools("tool", 1000)).unwrap();
    std::fs::write(out.join("tools_100.rs"), tools("small_tool", 100)).unwrap();
}

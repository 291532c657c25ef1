//! Generates 1,000 `#[tool]` functions, to measure catalogs of a realistic large size.

fn main() {
    let mut source = String::new();
    for i in 0..1000 {
        source.push_str(&format!(
            "/// Tool number {i}: adds its arguments and labels the sum.\n\
             ///\n\
             /// Example: {{\"a\": 1, \"b\": 2}}\n\
             #[tool_runtime::tool(read_only)]\n\
             pub fn tool_{i:04}(\n\
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
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("tools.rs");
    std::fs::write(out, source).unwrap();
}

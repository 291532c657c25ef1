use tool_runtime::{prompt, tool, CallContext};

/// Two headers that differ only in case, a name that is no header, an injected parameter.
#[tool]
fn route(
    /// A.
    #[arg(header = "Region")]
    a: String,
    /// B.
    #[arg(header = "region")]
    b: String,
    /// C.
    #[arg(header = "Bad Name")]
    c: String,
    #[arg(header = "Context")]
    context: CallContext,
) -> String {
    let _ = context;
    format!("{a}{b}{c}")
}

/// Not for prompts.
#[prompt]
fn ask(
    /// Q.
    #[arg(header = "Question")]
    question: String,
) -> String {
    question
}

fn main() {}

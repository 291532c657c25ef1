//! A tool binary with prompts and resources beside its tool, over the standard command
//! line: the CLI tests of `list`, `check` and `diff` on all three run it.

use tool_runtime::{prompt, resource, tool};

/// Find books whose title has these words.
#[tool(read_only)]
fn find_books(
    /// Words of the title.
    title: String,
) -> Vec<String> {
    vec![format!("A book about {title}")]
}

/// Recommend books of a genre.
#[prompt]
fn recommend(
    /// The genre.
    genre: String,
    /// How many books.
    count: Option<u32>,
) -> String {
    format!("Recommend {} {genre} books.", count.unwrap_or(3))
}

/// Recommend books with all of these tags.
#[prompt]
fn by_tags(
    /// The tags; a list, which no client can send as a prompt argument.
    tags: Vec<String>,
) -> String {
    format!("Recommend books tagged {}.", tags.join(", "))
}

/// The text of one book.
#[resource("library://books/{id}", mime_type = "text/plain")]
fn book(
    /// The book's number.
    id: u32,
) -> String {
    format!("The text of book {id}.")
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}

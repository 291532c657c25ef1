//! Doc comments as data: summary, description, `Example:` lines and parameter docs.
//!
//! This module is a plain function over lines of text (no `syn`), so it can be unit tested
//! and fuzzed on its own. Each input line carries an `origin`, the index of the attribute it
//! came from, so the caller can put an error on the right doc line.

use serde_json::{Map, Value};

/// One line of documentation and the attribute it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLine {
    pub text: String,
    pub origin: usize,
}

/// What a tool's doc comment says, read once.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ToolDoc {
    /// The first paragraph, its lines joined by spaces.
    pub summary: String,
    /// The prose without example lines and without the parameter section.
    pub description: String,
    pub examples: Vec<DocExample>,
    pub params: Vec<ParamDoc>,
    pub errors: Vec<DocError>,
}

/// An `Example:` (or `Ejemplo:`) line.
#[derive(Debug, Clone, PartialEq)]
pub struct DocExample {
    pub origin: usize,
    pub kind: ExampleKind,
}

/// An example is either an argument object or free text.
#[derive(Debug, Clone, PartialEq)]
pub enum ExampleKind {
    /// A JSON object of arguments, with the key order as written.
    Arguments(Map<String, Value>, Vec<String>),
    Text(String),
}

/// A bullet of a `# Arguments` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDoc {
    pub name: String,
    pub text: String,
    pub origin: usize,
}

/// A problem found in the doc comment, to be reported on its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocError {
    pub origin: usize,
    pub message: String,
}

const EXAMPLE_PREFIXES: [&str; 2] = ["Example:", "Ejemplo:"];
const PARAM_SECTIONS: [&str; 6] = [
    "arguments",
    "parameters",
    "args",
    "params",
    "argumentos",
    "parámetros",
];

/// Splits the raw string of one `#[doc = "..."]` attribute into lines.
///
/// `///` comments give one line with a leading space: exactly one space is stripped, so
/// indentation inside code blocks survives. Block comments (`/** ... */`) give many lines,
/// possibly decorated with a leading `*`: the decoration and the common indentation go.
pub fn split_attribute(raw: &str, origin: usize) -> Vec<DocLine> {
    if !raw.contains('\n') {
        let text = raw.strip_prefix(' ').unwrap_or(raw);
        return vec![DocLine {
            text: text.trim_end().to_owned(),
            origin,
        }];
    }
    let mut lines: Vec<&str> = raw.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let decorated = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.trim_start().starts_with('*'));
    let stripped: Vec<String> = if decorated {
        lines
            .iter()
            .map(|l| {
                let rest = l.trim_start().strip_prefix('*').unwrap_or("");
                rest.strip_prefix(' ').unwrap_or(rest).trim_end().to_owned()
            })
            .collect()
    } else {
        let indent = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        lines
            .iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end().to_owned())
            .collect()
    };
    stripped
        .into_iter()
        .map(|text| DocLine { text, origin })
        .collect()
}

/// Reads a tool's documentation lines.
pub fn parse(lines: &[DocLine]) -> ToolDoc {
    let mut doc = ToolDoc::default();
    let mut prose: Vec<&str> = Vec::new();
    let mut in_code_block = false;
    let mut in_param_section = false;
    let mut index = 0;
    while index < lines.len() {
        let line = &lines[index];
        let trimmed = line.text.trim();
        index += 1;

        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_code_block = !in_code_block;
            if !in_param_section {
                prose.push(&line.text);
            }
            continue;
        }
        if in_code_block {
            if !in_param_section {
                prose.push(&line.text);
            }
            continue;
        }
        if let Some(heading) = trimmed.strip_prefix('#') {
            let title = heading.trim_start_matches('#').trim().to_lowercase();
            in_param_section = PARAM_SECTIONS.contains(&title.as_str());
            if !in_param_section {
                prose.push(&line.text);
            }
            continue;
        }
        if let Some(text) = example_text(trimmed) {
            let (kind, consumed) = read_example(text, &lines[index..], line.origin, &mut doc);
            index += consumed;
            if let Some(kind) = kind {
                doc.examples.push(DocExample {
                    origin: line.origin,
                    kind,
                });
            }
            continue;
        }
        if in_param_section {
            read_param_line(line, &mut doc);
            continue;
        }
        prose.push(&line.text);
    }

    doc.description = tidy_paragraphs(&prose);
    doc.summary = first_paragraph(&doc.description);
    doc
}

/// The summary of a description given as one string (`#[tool(description = "...")]`).
pub fn first_paragraph(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn example_text(trimmed: &str) -> Option<&str> {
    EXAMPLE_PREFIXES
        .iter()
        .find_map(|prefix| trimmed.strip_prefix(prefix))
        .map(str::trim)
}

/// Reads one example; a JSON object may continue over the following lines. Returns the
/// example (none when it was in error) and how many following lines it used.
fn read_example(
    text: &str,
    following: &[DocLine],
    origin: usize,
    doc: &mut ToolDoc,
) -> (Option<ExampleKind>, usize) {
    if !text.starts_with('{') {
        return (Some(ExampleKind::Text(text.to_owned())), 0);
    }
    let mut source = text.to_owned();
    let mut consumed = 0;
    loop {
        match parse_object(&source) {
            Ok((object, order)) => return (Some(ExampleKind::Arguments(object, order)), consumed),
            Err(error) => {
                // Only an unfinished object may go on to the next line.
                let next = following.get(consumed).map(|l| l.text.trim());
                let may_continue = error.is_eof()
                    && next.is_some_and(|n| !n.is_empty() && example_text(n).is_none());
                if !may_continue {
                    doc.errors.push(DocError {
                        origin,
                        message: format!(
                            "this example starts with `{{` but is not a valid JSON object: {error}"
                        ),
                    });
                    return (None, consumed);
                }
                source.push('\n');
                source.push_str(next.unwrap_or_default());
                consumed += 1;
            }
        }
    }
}

/// Parses a JSON object and also returns its keys in the order written, so errors and
/// generated examples follow the user's order.
fn parse_object(source: &str) -> Result<(Map<String, Value>, Vec<String>), serde_json::Error> {
    let object: Map<String, Value> = serde_json::from_str(source)?;
    let mut order: Vec<(usize, String)> = object
        .keys()
        .map(|key| {
            let quoted = serde_json::to_string(key).unwrap_or_default();
            (source.find(&quoted).unwrap_or(usize::MAX), key.clone())
        })
        .collect();
    order.sort();
    Ok((object, order.into_iter().map(|(_, key)| key).collect()))
}

fn read_param_line(line: &DocLine, doc: &mut ToolDoc) {
    let trimmed = line.text.trim();
    if trimmed.is_empty() {
        return;
    }
    let bullet = trimmed
        .strip_prefix("* ")
        .or_else(|| trimmed.strip_prefix("- "))
        .or_else(|| trimmed.strip_prefix("+ "));
    let Some(rest) = bullet else {
        // An indented line continues the bullet above it.
        match doc.params.last_mut() {
            Some(last) if line.text.starts_with(char::is_whitespace) => {
                if !last.text.is_empty() {
                    last.text.push(' ');
                }
                last.text.push_str(trimmed);
            }
            _ => doc.errors.push(DocError {
                origin: line.origin,
                message: "expected a parameter bullet such as ``* `city` - the city name`` in \
                          this section"
                    .to_owned(),
            }),
        }
        return;
    };
    let rest = rest.trim_start();
    let (name, after) = if let Some(quoted) = rest.strip_prefix('`') {
        match quoted.split_once('`') {
            Some((name, after)) => (name.trim(), after),
            None => ("", ""),
        }
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        rest.split_at(end)
    };
    if name.is_empty() {
        doc.errors.push(DocError {
            origin: line.origin,
            message: "cannot read a parameter name here; write ``* `city` - the city name``"
                .to_owned(),
        });
        return;
    }
    let text = after
        .trim_start()
        .trim_start_matches(['-', ':', '—', '–'])
        .trim();
    doc.params.push(ParamDoc {
        name: name.to_owned(),
        text: text.to_owned(),
        origin: line.origin,
    });
}

/// Joins prose lines, dropping leading and trailing blank lines and runs of blank lines.
fn tidy_paragraphs(lines: &[&str]) -> String {
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(if blank { "" } else { line });
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<DocLine> {
        text.iter()
            .enumerate()
            .flat_map(|(origin, raw)| split_attribute(raw, origin))
            .collect()
    }

    #[test]
    fn summary_is_the_first_paragraph_and_examples_leave_the_prose() {
        let doc = parse(&lines(&[
            " Get the current weather",
            " for a city.",
            "",
            " Data is at most ten minutes old.",
            "",
            r#" Example: {"city": "London"}"#,
            " Example: ask for Lima",
        ]));
        assert_eq!(doc.summary, "Get the current weather for a city.");
        assert_eq!(
            doc.description,
            "Get the current weather\nfor a city.\n\nData is at most ten minutes old."
        );
        assert_eq!(doc.examples.len(), 2);
        assert!(
            matches!(&doc.examples[0].kind, ExampleKind::Arguments(m, _) if m["city"] == "London")
        );
        assert_eq!(
            doc.examples[1].kind,
            ExampleKind::Text("ask for Lima".into())
        );
        assert!(doc.errors.is_empty());
    }

    #[test]
    fn spanish_examples_and_multi_line_objects() {
        let doc = parse(&lines(&[
            " Suma.",
            r#" Ejemplo: {"a": 1,"#,
            r#"   "b": 2}"#,
            " Fin.",
        ]));
        match &doc.examples[0].kind {
            ExampleKind::Arguments(m, order) => {
                assert_eq!(m.len(), 2);
                assert_eq!(order, &["a", "b"]);
            }
            other => panic!("expected arguments, got {other:?}"),
        }
        assert_eq!(doc.description, "Suma.\nFin.");
    }

    #[test]
    fn invalid_json_example_is_an_error_on_its_line() {
        let doc = parse(&lines(&[" Add.", "", r#" Example: {"a": }"#]));
        assert_eq!(doc.errors.len(), 1);
        assert_eq!(doc.errors[0].origin, 2);
        assert!(doc.errors[0].message.contains("not a valid JSON object"));
        assert!(doc.examples.is_empty());
    }

    #[test]
    fn arguments_section_gives_parameter_docs_and_leaves_the_prose() {
        let doc = parse(&lines(&[
            " Search.",
            "",
            " # Arguments",
            "",
            " * `query` - what to look for,",
            "   matched literally",
            " - limit: at most this many",
            "",
            " # Errors",
            " Fails when the index is cold.",
        ]));
        assert_eq!(
            doc.params,
            vec![
                ParamDoc {
                    name: "query".into(),
                    text: "what to look for, matched literally".into(),
                    origin: 4
                },
                ParamDoc {
                    name: "limit".into(),
                    text: "at most this many".into(),
                    origin: 6
                },
            ]
        );
        assert_eq!(
            doc.description,
            "Search.\n\n# Errors\nFails when the index is cold."
        );
    }

    #[test]
    fn code_blocks_keep_indentation_and_hide_examples() {
        let doc = parse(&lines(&[
            " Run.",
            "",
            " ```",
            "     indented",
            " Example: not an example here",
            " ```",
        ]));
        assert!(doc.examples.is_empty());
        assert!(doc.description.contains("    indented"));
        assert!(doc.description.contains("Example: not an example here"));
    }

    #[test]
    fn block_comments_lose_their_decoration() {
        let split = split_attribute("\n     * First line.\n     *\n     * Second.\n     ", 0);
        let texts: Vec<_> = split.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["First line.", "", "Second."]);
        let plain = split_attribute("\n    Summary here.\n\n      code\n", 1);
        let texts: Vec<_> = plain.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Summary here.", "", "  code"]);
    }

    #[test]
    fn bullets_without_a_name_are_errors() {
        let doc = parse(&lines(&[" X.", " # Arguments", " * - nothing"]));
        assert_eq!(doc.errors.len(), 1);
        assert_eq!(doc.errors[0].origin, 2);
    }
}

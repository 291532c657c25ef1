//! Bearer tokens the command line reads: from a file named by a flag, else from an
//! environment variable. No flag takes a token itself: a command line is visible to every
//! user of the machine.

use std::path::Path;

/// The token in `file` when one is named, else in the environment variable `variable`;
/// none when neither is set.
#[cfg(feature = "http")]
pub(super) fn token(file: Option<&Path>, variable: &str) -> Result<Option<String>, String> {
    match file {
        Some(path) => from_file(path).map(Some),
        None => from_variable(variable),
    }
}

/// The token in the file at `path`.
pub(super) fn from_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read the bearer token from {}: {error}",
            path.display()
        )
    })?;
    checked(&text, &format!("the file {}", path.display()))
}

/// The token in the environment variable `name`, if it is set.
pub(super) fn from_variable(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(text) => checked(&text, name).map(Some),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid UTF-8")),
    }
}

/// `text` as a token, read from `source`: surrounding whitespace (a file's last newline)
/// is not part of it; an empty token is refused (as a lock it opens for anyone, as a key it
/// is a mistake), and so is one a header cannot carry (left to fail at each request, it
/// would be sent nowhere).
fn checked(text: &str, source: &str) -> Result<String, String> {
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("the bearer token in {source} is empty"));
    }
    if token.chars().any(char::is_control) {
        return Err(format!(
            "the bearer token in {source} holds a line break or another control character: \
             a token is one line"
        ));
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_is_read_without_its_last_newline_and_an_empty_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("secrets-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "s3cret\n").unwrap();
        assert_eq!(from_file(&file).unwrap(), "s3cret");
        std::fs::write(&file, " \n").unwrap();
        let empty = from_file(&file).unwrap_err();
        assert!(
            empty.contains("is empty") && empty.contains("the file"),
            "{empty}"
        );
        std::fs::write(&file, "first\nsecond\n").unwrap();
        let two_lines = from_file(&file).unwrap_err();
        assert!(two_lines.contains("control character"), "{two_lines}");
        let missing = from_file(&dir.join("absent")).unwrap_err();
        assert!(
            missing.contains("cannot read the bearer token from"),
            "{missing}"
        );
        let unset = from_variable("TOOL_RUNTIME_TEST_UNSET_VARIABLE").unwrap();
        assert_eq!(unset, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Bearer tokens the command line reads: from a file named by a flag, else from an
//! environment variable. No flag takes a token itself: a command line is visible to every
//! user of the machine.

use std::path::Path;

/// The token in `file` when one is named, else in the environment variable `variable`;
/// none when neither is set. Surrounding whitespace (a file's last newline) is not part of
/// it; an empty token is refused: as a lock it opens for anyone, as a key it is a mistake.
pub(super) fn token(file: Option<&Path>, variable: &str) -> Result<Option<String>, String> {
    let (token, source) = match file {
        Some(path) => (token_file(path)?, format!("the file {}", path.display())),
        None => match std::env::var(variable) {
            Ok(token) => (token, variable.to_owned()),
            Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!("{variable} is not valid UTF-8"))
            }
        },
    };
    let token = token.trim();
    if token.is_empty() {
        return Err(format!("the bearer token in {source} is empty"));
    }
    // A header cannot carry it: left to fail at each request, it would be sent nowhere.
    if token.chars().any(char::is_control) {
        return Err(format!(
            "the bearer token in {source} holds a line break or another control character: \
             a token is one line"
        ));
    }
    Ok(Some(token.to_owned()))
}

/// What the token file at `path` holds, as it is.
fn token_file(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read the bearer token from {}: {error}",
            path.display()
        )
    })
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
        let read = token(Some(&file), "TOOL_RUNTIME_TEST_UNSET_VARIABLE").unwrap();
        assert_eq!(read.as_deref(), Some("s3cret"));
        std::fs::write(&file, " \n").unwrap();
        let empty = token(Some(&file), "TOOL_RUNTIME_TEST_UNSET_VARIABLE").unwrap_err();
        assert!(
            empty.contains("is empty") && empty.contains("token"),
            "{empty}"
        );
        std::fs::write(&file, "first\nsecond\n").unwrap();
        let two_lines = token(Some(&file), "TOOL_RUNTIME_TEST_UNSET_VARIABLE").unwrap_err();
        assert!(two_lines.contains("control character"), "{two_lines}");
        let missing = token(Some(&dir.join("absent")), "X").unwrap_err();
        assert!(
            missing.contains("cannot read the bearer token from"),
            "{missing}"
        );
        assert_eq!(
            token(None, "TOOL_RUNTIME_TEST_UNSET_VARIABLE").unwrap(),
            None
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Keeping every path inside the workspace root.
//!
//! A path from a caller is relative to the root. It is refused when it is absolute, names
//! `..`, holds a NUL byte, leads outside the root through a symbolic link, or names a
//! device, FIFO or socket. Errors name the caller's path only, never where the root is.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The directory the tools work in, resolved once.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathError {
    /// An absolute path (or a drive or UNC prefix).
    Absolute(String),
    /// A `..` component.
    ParentDirectory(String),
    /// A NUL byte.
    NulByte,
    /// It exists, but only outside the root (through a symbolic link).
    OutsideRoot(String),
    /// A device, FIFO or socket.
    Special(String),
    /// Nothing there.
    NotFound(String),
    /// There, but not what the tool needs.
    WrongKind {
        /// The path.
        path: String,
        /// What it needed: "a directory" or "a file".
        expected: &'static str,
    },
    /// The operating system refused (permissions, ...).
    Unreadable(String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Absolute(path) => write!(
                f,
                "'{path}' is an absolute path; give a path relative to the workspace root, \
                 like 'src/main.rs'"
            ),
            PathError::ParentDirectory(path) => write!(
                f,
                "'{path}' uses '..'; paths must stay inside the workspace"
            ),
            PathError::NulByte => f.write_str("the path contains a NUL byte"),
            PathError::OutsideRoot(path) => write!(
                f,
                "'{path}' leads outside the workspace (through a symbolic link)"
            ),
            PathError::Special(path) => write!(
                f,
                "'{path}' is a device, FIFO or socket, not a file or directory"
            ),
            PathError::NotFound(path) => write!(f, "'{path}' does not exist in the workspace"),
            PathError::WrongKind { path, expected } => write!(f, "'{path}' is not {expected}"),
            PathError::Unreadable(path) => write!(f, "'{path}' cannot be read"),
        }
    }
}

impl std::error::Error for PathError {}

/// What a resolved path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
}

impl Workspace {
    /// The workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "the workspace root is not a directory",
            ));
        }
        Ok(Workspace { root })
    }

    /// The real location of the root (for the server's own use; never shown to callers).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a caller's path to a real path inside the root, and what it is.
    pub fn resolve(&self, path: &str) -> Result<(PathBuf, Kind), PathError> {
        let relative = check_syntax(path)?;
        let joined = self.root.join(&relative);
        let real = match joined.canonicalize() {
            Ok(real) => real,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(PathError::NotFound(path.to_owned()))
            }
            Err(_) => return Err(PathError::Unreadable(path.to_owned())),
        };
        if !real.starts_with(&self.root) {
            return Err(PathError::OutsideRoot(path.to_owned()));
        }
        let metadata =
            std::fs::metadata(&real).map_err(|_| PathError::Unreadable(path.to_owned()))?;
        let kind = if metadata.is_dir() {
            Kind::Directory
        } else if metadata.is_file() {
            Kind::File
        } else {
            return Err(PathError::Special(path.to_owned()));
        };
        Ok((real, kind))
    }

    /// Resolves a path that must be a directory.
    pub fn directory(&self, path: &str) -> Result<PathBuf, PathError> {
        match self.resolve(path)? {
            (real, Kind::Directory) => Ok(real),
            _ => Err(PathError::WrongKind {
                path: path.to_owned(),
                expected: "a directory",
            }),
        }
    }

    /// Resolves a path that must be a file.
    pub fn file(&self, path: &str) -> Result<PathBuf, PathError> {
        match self.resolve(path)? {
            (real, Kind::File) => Ok(real),
            _ => Err(PathError::WrongKind {
                path: path.to_owned(),
                expected: "a file",
            }),
        }
    }

    /// A real path inside the root as callers see it: relative, with `/`.
    pub fn display(&self, real: &Path) -> String {
        let relative = real.strip_prefix(&self.root).unwrap_or(real);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts.join("/")
    }
}

/// The purely textual checks, before touching the file system.
pub fn check_syntax(path: &str) -> Result<PathBuf, PathError> {
    if path.contains('\0') {
        return Err(PathError::NulByte);
    }
    // A drive letter or a UNC prefix is absolute on Windows; refuse it everywhere.
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with('/') || path.starts_with('\\') || drive {
        return Err(PathError::Absolute(path.to_owned()));
    }
    let mut relative = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => {
                if part
                    .to_string_lossy()
                    .split('\\')
                    .any(|piece| piece == "..")
                {
                    return Err(PathError::ParentDirectory(path.to_owned()));
                }
                relative.push(part);
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(PathError::ParentDirectory(path.to_owned())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Absolute(path.to_owned()))
            }
        }
    }
    Ok(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_checks() {
        assert_eq!(
            check_syntax("src/main.rs").unwrap(),
            PathBuf::from("src/main.rs")
        );
        assert_eq!(
            check_syntax("./src/./lib.rs").unwrap(),
            PathBuf::from("src/lib.rs")
        );
        assert_eq!(check_syntax("").unwrap(), PathBuf::new());
        assert!(matches!(
            check_syntax("../x"),
            Err(PathError::ParentDirectory(_))
        ));
        assert!(matches!(
            check_syntax("a/../../x"),
            Err(PathError::ParentDirectory(_))
        ));
        assert!(matches!(
            check_syntax("a\\..\\..\\x"),
            Err(PathError::ParentDirectory(_))
        ));
        assert!(matches!(
            check_syntax("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(
            check_syntax("C:\\Windows"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(
            check_syntax("\\\\server\\share"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(check_syntax("a\0b"), Err(PathError::NulByte)));
    }
}

//! Turns at updating a file that several threads and programs share: a lock on a file
//! beside it (its name with `.lock` appended, left in place), and in this process a mutex
//! as well, so updates here wait in order rather than polling the lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long an update waits for another program's to end before it gives up: an update
/// takes milliseconds, and one that holds its turn for seconds is stuck (stopped at a
/// terminal, say).
pub(super) const WAIT: Duration = Duration::from_secs(5);

/// A turn at updating a file, held until dropped.
pub(super) struct Turn {
    _in_this_process: MutexGuard<'static, ()>,
    /// `None` where the system offers no file locks.
    _across_programs: Option<File>,
}

/// The lock file of the file at `path`.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

/// Waits for the other updates of the file at `path` to end (this process's in turn,
/// another program's for `wait` at most) and holds the turn until it is dropped. Where the
/// system offers no file locks (std has none on some targets), only this process's updates
/// take turns. The wait blocks the thread: call it off an async runtime's threads.
pub(super) fn take(path: &Path, wait: Duration) -> Result<Turn, String> {
    // One mutex for every file: updates are rare and brief.
    static IN_THIS_PROCESS: Mutex<()> = Mutex::new(());
    let in_this_process = crate::sync::lock(&IN_THIS_PROCESS);
    let lock = lock_path(path);
    let failed = |error: std::io::Error| {
        format!(
            "the lock {} of the OAuth credentials could not be taken: {error}",
            lock.display()
        )
    };
    let file = open(&lock).map_err(failed)?;
    let deadline = Instant::now() + wait;
    let across_programs = loop {
        match file.try_lock() {
            Ok(()) => break Some(file),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(format!(
                    "another program has held {} for over {} s: its update of the OAuth \
                     credentials has not ended (is it stopped?)",
                    lock.display(),
                    wait.as_secs_f32()
                ))
            }
            Err(TryLockError::Error(error)) if error.kind() == std::io::ErrorKind::Unsupported => {
                break None
            }
            Err(TryLockError::Error(error)) => return Err(failed(error)),
        }
    };
    Ok(Turn {
        _in_this_process: in_this_process,
        _across_programs: across_programs,
    })
}

/// The lock file at `path`: created anew, the owner's alone, where there is none;
/// otherwise opened as it is, for reading (it is never written), and never created
/// through a link left in its place.
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => File::open(path),
        opened => opened,
    }
}

//! Files of the machine that gitops-lint itself writes or reads back (report
//! outputs, the facts store), opened so that whoever controls their
//! directory cannot steer them: a symlink at the path is refused rather
//! than followed (a pull request can commit one where an output is
//! written), and a FIFO or device where a regular file belongs is refused
//! rather than waited on.

use std::fs::File;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// Why a path was not opened.
#[derive(Debug)]
pub enum OpenError {
    /// The last component of the path is a symlink.
    Symlink,
    /// The path is not a regular file (a FIFO, a socket, a directory).
    NotRegular,
    /// Any other failure of the system call.
    Io(std::io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Symlink => {
                f.write_str("is a symlink, which is not followed; remove it or name another path")
            }
            OpenError::NotRegular => f.write_str("is not a regular file; name a file"),
            OpenError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// `O_NOFOLLOW | O_NONBLOCK`: the open fails on a symlink (`ELOOP`), and
/// does not wait for a FIFO's other end; the type is checked on the handle.
#[cfg(unix)]
fn no_follow(o: &mut std::fs::OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt as _;
    o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
}

#[cfg(not(unix))]
fn no_follow(_: &mut std::fs::OpenOptions) {}

fn open(path: &Path, o: &std::fs::OpenOptions) -> Result<File, OpenError> {
    // Checked first too where `O_NOFOLLOW` is not available, and to tell a
    // symlink from other `ELOOP` causes.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(OpenError::Symlink);
    }
    let file = o.open(path).map_err(|e| {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            OpenError::Symlink
        } else {
            OpenError::Io(e)
        }
    })?;
    Ok(file)
}

/// Reads the regular file at `path`, at most `max` bytes long, without
/// following a symlink or blocking on a FIFO. `Ok(None)` when the file is
/// longer than `max`.
///
/// # Errors
/// A symlink, a file that is not regular, or a failure to read it.
pub fn read_regular(path: &Path, max: u64) -> Result<Option<File>, OpenError> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    no_follow(&mut o);
    let file = open(path, &o)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if !meta.file_type().is_file() {
        return Err(OpenError::NotRegular);
    }
    Ok((meta.len() <= max).then_some(file))
}

/// Writes `bytes` to `path`, replacing a regular file's content, without
/// following a symlink at `path` or blocking on a FIFO. A character device
/// (`/dev/null`) is written to as it is.
///
/// # Errors
/// A symlink, a FIFO, socket or directory, or a failure to write.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), OpenError> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true);
    no_follow(&mut o);
    let mut file = match open(path, &o) {
        Ok(f) => f,
        // A FIFO without a reader refuses a non-blocking writer (`ENXIO`).
        Err(OpenError::Io(_)) if is_fifo(path) => return Err(OpenError::NotRegular),
        Err(e) => return Err(e),
    };
    let meta = file.metadata().map_err(OpenError::Io)?;
    let kind = meta.file_type();
    if kind.is_file() {
        // Truncated only once known to be a regular file.
        file.set_len(0).map_err(OpenError::Io)?;
    } else if !is_char_device(kind) {
        return Err(OpenError::NotRegular);
    }
    file.write_all(bytes).map_err(OpenError::Io)
}

#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

#[cfg(unix)]
fn is_char_device(kind: std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    kind.is_char_device()
}

#[cfg(not(unix))]
fn is_char_device(_: std::fs::FileType) -> bool {
    false
}

/// `p` as the directory the system would reach: absolute, each existing
/// prefix resolved through its symlinks, and each `..` applied to what has
/// been resolved so far (so `missing/../x` is `x`, and `link/..` is the
/// link target's parent, as the kernel walks it). Components that do not
/// exist yet are kept as named: creating them makes plain directories.
#[must_use]
pub fn resolved(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut out = PathBuf::new();
    // Once a component is missing, everything after it is new too, except
    // that `..` can climb back into what exists.
    for c in abs.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if let Ok(real) = out.canonicalize() {
                    out = real;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_then_dot_dot_is_resolved_lexically() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(root.join("repo")).unwrap_or_else(|e| panic!("{e}"));
        let p = root.join("no-such-dir/../repo/cache");
        assert_eq!(resolved(&p), root.join("repo/cache"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_after_a_missing_directory_is_followed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("repo/.git")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root.join("repo/.git"), root.join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let p = root.join("gone/../link/cache");
        assert_eq!(resolved(&p), root.join("repo/.git/cache"));
        let p = root.join("link/../x");
        assert_eq!(resolved(&p), root.join("repo/x"));
    }
}

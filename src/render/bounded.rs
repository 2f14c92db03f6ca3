//! Running an external renderer (`helm template`) with bounded time,
//! output and memory: a chart from an untrusted pull request can loop
//! (`until 2147483647`), print without end or build a huge string, and none
//! of it may hang or exhaust the run.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long one external render may take. Argo CD's repo-server gives up on
/// a manifest generation after 60 seconds by default
/// (`--repo-server-timeout-seconds`).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(60);

/// Most bytes of standard output kept from one external render.
pub(crate) const MAX_OUTPUT: u64 = 64 * 1024 * 1024;

/// Most address space one external render may use. helm (a Go program)
/// reserves about 600 MiB of address space when it starts, and the largest
/// charts render in well under 1 GiB; a chart building strings without end
/// fails with an out-of-memory error instead of taking the machine's memory.
pub(crate) const MAX_ADDRESS_SPACE: u64 = 2 * 1024 * 1024 * 1024;

/// Most bytes of standard error kept (only its first line is shown).
const MAX_STDERR: u64 = 64 * 1024;

/// What a bounded run produced.
#[derive(Debug)]
pub(crate) struct Output {
    /// Exit status.
    pub(crate) status: ExitStatus,
    /// Standard output (at most [`MAX_OUTPUT`] bytes).
    pub(crate) stdout: Vec<u8>,
    /// The start of standard error.
    pub(crate) stderr: Vec<u8>,
}

/// Why a bounded run did not produce output.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The program could not be started.
    #[error("cannot run it: {0}")]
    Spawn(std::io::Error),
    /// It ran longer than the limit and was killed.
    #[error("it ran longer than {} seconds and was stopped", .0.as_secs())]
    Timeout(Duration),
    /// It printed more than the limit and was killed.
    #[error("its output exceeded {} MiB and it was stopped", .0 / (1024 * 1024))]
    TooMuchOutput(u64),
    /// Waiting for it failed.
    #[error("waiting for it failed: {0}")]
    Wait(std::io::Error),
    /// Its memory could not be limited, so it was not let run.
    #[error("its memory could not be limited: {0}")]
    Limit(std::io::Error),
}

/// Runs `cmd` with no standard input, killing it after `timeout` or once
/// it has written more than `max_output` bytes.
///
/// # Errors
/// See [`RunError`].
pub(crate) fn run(
    cmd: &mut Command,
    timeout: Duration,
    max_output: u64,
) -> Result<Output, RunError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(RunError::Spawn)?;
    if let Err(e) = limit_address_space(&child, MAX_ADDRESS_SPACE) {
        kill(&mut child);
        return Err(RunError::Limit(e));
    }
    let stdout = child.stdout.take().map(|s| drain(s, max_output + 1, false));
    let stderr = child.stderr.take().map(|s| drain(s, MAX_STDERR, true));
    let start = Instant::now();
    // Polled with a growing pause: a run of a few tens of milliseconds
    // (most `helm template` runs) is seen ending within a millisecond or
    // two, a long one costs a wake-up every 20 ms.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                kill(&mut child);
                return Err(RunError::Wait(e));
            }
        }
        if start.elapsed() > timeout {
            kill(&mut child);
            return Err(RunError::Timeout(timeout));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    if stdout.len() as u64 > max_output {
        return Err(RunError::TooMuchOutput(max_output));
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Sets the child's address-space limit (`RLIMIT_AS`) from outside with
/// `prlimit(2)`, which needs no code in the child between fork and exec (the
/// crate forbids `unsafe`, which `pre_exec` is). The child runs for the few
/// microseconds before the call unlimited: what it can allocate in that time
/// is bounded by the time, and everything after by the limit.
#[cfg(target_os = "linux")]
fn limit_address_space(child: &Child, bytes: u64) -> std::io::Result<()> {
    use rustix::process::{getrlimit, prlimit, Pid, Resource, Rlimit};
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| std::io::Error::other("no such process id"))?;
    // Never above what gitops-lint itself was given (raising a hard limit
    // is not allowed, and a lower one is already the bound).
    let inherited = getrlimit(Resource::As);
    let at_most = |l: Option<u64>| Some(l.map_or(bytes, |l| l.min(bytes)));
    let limit = Rlimit {
        current: at_most(inherited.current),
        maximum: at_most(inherited.maximum),
    };
    prlimit(Some(pid), Resource::As, limit)
        .map(|_| ())
        .map_err(std::io::Error::from)
}

/// Elsewhere the child is bounded by time and output only.
#[cfg(not(target_os = "linux"))]
fn limit_address_space(_child: &Child, _bytes: u64) -> std::io::Result<()> {
    Ok(())
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads up to `limit` bytes. Then either keeps reading and discarding (so
/// a chatty writer is not blocked on a full pipe), or closes the pipe so
/// the writer fails on its next write and ends.
fn drain<R: Read + Send + 'static>(
    mut r: R,
    limit: u64,
    discard_rest: bool,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut r).take(limit).read_to_end(&mut kept);
        if discard_rest {
            let _ = std::io::copy(&mut r, &mut std::io::sink());
        }
        kept
    })
}

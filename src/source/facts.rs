//! Facts about content, kept between runs: yes-or-no answers that depend
//! only on the bytes of a blob or tree (so only on its object id) and on
//! the binary that computed them.
//!
//! The file lives in a cache directory outside the repository, one per
//! binary (its version, size and modification time name it), so a fact
//! computed by another build is never read. It is read whole and trusted
//! only when its header, length and checksum are right; anything else is
//! an empty store and every fact is computed again. A run writes the file
//! anew through a temporary file renamed into place, so concurrent runs
//! each leave a whole file (the last one wins) and a crash leaves the old
//! one. The store is bounded ([`MAX_FACTS`]): beyond it, facts this run did
//! not use are dropped first.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::ObjectId;

/// Most facts kept (23 bytes each on disk).
pub(crate) const MAX_FACTS: usize = 1 << 21;

/// The question a fact answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Question {
    /// A blob may declare an Argo CD object, CRD or setting (the inventory
    /// scan's byte test).
    MayDeclare = 1,
    /// A tree holds no symlink, submodule or file whose content may matter
    /// to other apps (see `argocd::unchanged`).
    PlainSubtree = 2,
}

impl Question {
    fn from_byte(b: u8) -> Option<Question> {
        match b {
            1 => Some(Question::MayDeclare),
            2 => Some(Question::PlainSubtree),
            _ => None,
        }
    }
}

const MAGIC: &[u8; 8] = b"GLFACTS1";

/// One fact: its answer, and whether this run used or made it.
#[derive(Clone, Copy)]
struct Fact {
    answer: bool,
    used: bool,
}

/// What one run knows and learns; see the module doc.
pub(crate) struct Facts {
    file: Option<PathBuf>,
    binary: String,
    map: Mutex<HashMap<(Question, ObjectId), Fact, foldhash::fast::RandomState>>,
    loaded: usize,
    learned: Mutex<usize>,
}

/// What a run did with the store, for `GITOPS_LINT_STATS`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FactStats {
    /// Facts read from the file.
    pub(crate) loaded: usize,
    /// Facts computed by this run.
    pub(crate) learned: usize,
}

impl Facts {
    /// The store of this binary in `dir` (created on [`Facts::save`]). A
    /// missing, foreign or damaged file is an empty store.
    #[must_use]
    pub(crate) fn open(dir: &Path) -> Facts {
        let binary = binary_identity();
        let file = dir.join(format!("facts-{}.bin", short_hash(binary.as_bytes())));
        let mut map = HashMap::default();
        if let Some(bytes) = read_bounded(&file) {
            if let Some(facts) = decode(&bytes, &binary) {
                map = facts;
            }
        }
        let loaded = map.len();
        Facts {
            file: Some(file),
            binary,
            map: Mutex::new(map),
            loaded,
            learned: Mutex::new(0),
        }
    }

    /// The path of the file, when the store is kept between runs.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(Question, ObjectId), Fact, foldhash::fast::RandomState>>
    {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The known answer to `q` about `id`.
    #[must_use]
    pub(crate) fn get(&self, q: Question, id: ObjectId) -> Option<bool> {
        let mut map = self.lock();
        let fact = map.get_mut(&(q, id))?;
        fact.used = true;
        Some(fact.answer)
    }

    /// Records the answer to `q` about `id`. An all-zero id is a
    /// placeholder, not content, and is never recorded.
    pub(crate) fn put(&self, q: Question, id: ObjectId, answer: bool) {
        if id.0 == [0; 20] {
            return;
        }
        let fresh = self
            .lock()
            .insert((q, id), Fact { answer, used: true })
            .is_none();
        if fresh {
            *self
                .learned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        }
    }

    /// What the run loaded and learned.
    #[must_use]
    pub(crate) fn stats(&self) -> FactStats {
        FactStats {
            loaded: self.loaded,
            learned: *self
                .learned
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// Writes the store back when this run learned something. A failure
    /// to write costs the next run its speed, never its answer, so it is
    /// returned for a note and not fatal.
    ///
    /// # Errors
    /// The directory or file cannot be written.
    pub(crate) fn save(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        if self.stats().learned == 0 {
            return Ok(());
        }
        let body = {
            let map = self.lock();
            let mut facts: Vec<(&(Question, ObjectId), &Fact)> = map.iter().collect();
            // Used facts first, so the bound drops the stale ones.
            facts.sort_by_key(|(k, f)| (!f.used, k.0 as u8, k.1));
            facts.truncate(MAX_FACTS);
            encode(&facts, &self.binary)
        };
        let dir = file.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&body)?;
        tmp.as_file().sync_all()?;
        tmp.persist(file).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Question {
    fn byte(self) -> u8 {
        self as u8
    }
}

/// Names the running binary: its version, and the size and modification
/// time of its executable, so two builds of one version differ.
fn binary_identity() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}-{mtime}", m.len())
        })
        .unwrap_or_default();
    format!("{} {exe}", env!("CARGO_PKG_VERSION"))
}

fn short_hash(bytes: &[u8]) -> String {
    checksum(bytes).to_string()[..16].to_string()
}

fn checksum(bytes: &[u8]) -> ObjectId {
    super::git::git_blob_id(bytes)
}

/// The header, the binary's identity, the facts and a checksum of it all.
fn encode(facts: &[(&(Question, ObjectId), &Fact)], binary: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + binary.len() + facts.len() * 22);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(binary.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(binary.as_bytes());
    out.extend_from_slice(&(facts.len() as u64).to_le_bytes());
    for ((q, id), f) in facts {
        out.push(q.byte());
        out.extend_from_slice(&id.0);
        out.push(u8::from(f.answer));
    }
    let sum = checksum(&out);
    out.extend_from_slice(&sum.0);
    out
}

/// The facts of a file written by `binary`, or `None` when anything in it
/// is not exactly as [`encode`] writes it.
fn decode(
    bytes: &[u8],
    binary: &str,
) -> Option<HashMap<(Question, ObjectId), Fact, foldhash::fast::RandomState>> {
    let (body, sum) = bytes.split_at(bytes.len().checked_sub(20)?);
    if checksum(body).0 != sum {
        return None;
    }
    let rest = body.strip_prefix(MAGIC.as_slice())?;
    let (len, rest) = rest.split_at_checked(4)?;
    let len = usize::try_from(u32::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (name, rest) = rest.split_at_checked(len)?;
    if name != binary.as_bytes() {
        return None;
    }
    let (count, rest) = rest.split_at_checked(8)?;
    let count = usize::try_from(u64::from_le_bytes(count.try_into().ok()?)).ok()?;
    if count > MAX_FACTS || rest.len() != count.checked_mul(22)? {
        return None;
    }
    let mut map = HashMap::default();
    for rec in rest.chunks_exact(22) {
        let q = Question::from_byte(rec[0])?;
        let id = ObjectId(rec[1..21].try_into().ok()?);
        let answer = match rec[21] {
            0 => false,
            1 => true,
            _ => return None,
        };
        map.insert(
            (q, id),
            Fact {
                answer,
                used: false,
            },
        );
    }
    Some(map)
}

/// The file's bytes, unless it is missing or larger than a whole store.
fn read_bounded(file: &Path) -> Option<Vec<u8>> {
    let max = 64 + 4096 + MAX_FACTS * 22;
    let len = std::fs::metadata(file).ok()?.len();
    if len > max as u64 {
        return None;
    }
    std::fs::read(file).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8) -> ObjectId {
        ObjectId([b; 20])
    }

    #[test]
    fn facts_survive_a_save_and_a_damaged_file_is_an_empty_store() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let facts = Facts::open(dir.path());
        assert_eq!(facts.get(Question::MayDeclare, id(1)), None);
        facts.put(Question::MayDeclare, id(1), false);
        facts.put(Question::PlainSubtree, id(1), true);
        facts.put(Question::PlainSubtree, ObjectId([0; 20]), true);
        facts.save().unwrap_or_else(|e| panic!("{e}"));
        let again = Facts::open(dir.path());
        assert_eq!(again.stats().loaded, 2);
        assert_eq!(again.get(Question::MayDeclare, id(1)), Some(false));
        assert_eq!(again.get(Question::PlainSubtree, id(1)), Some(true));
        assert_eq!(again.get(Question::PlainSubtree, ObjectId([0; 20])), None);
        // One flipped answer byte: the checksum no longer matches.
        let file = again.file().map(Path::to_path_buf).unwrap_or_default();
        let mut bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
        let at = bytes.len() - 21;
        bytes[at] ^= 1;
        std::fs::write(&file, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let damaged = Facts::open(dir.path());
        assert_eq!(damaged.stats().loaded, 0);
        assert_eq!(damaged.get(Question::MayDeclare, id(1)), None);
        // A truncated file too.
        std::fs::write(&file, &bytes[..10]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Facts::open(dir.path()).stats().loaded, 0);
    }

    #[test]
    fn another_binary_does_not_read_the_facts() {
        let facts: Vec<((Question, ObjectId), Fact)> = vec![(
            (Question::MayDeclare, id(7)),
            Fact {
                answer: true,
                used: true,
            },
        )];
        let refs: Vec<(&(Question, ObjectId), &Fact)> = facts.iter().map(|(k, f)| (k, f)).collect();
        let bytes = encode(&refs, "0.1.0 123-456");
        assert!(decode(&bytes, "0.1.0 123-456").is_some_and(|m| m.len() == 1));
        assert!(decode(&bytes, "0.1.0 123-457").is_none());
    }
}

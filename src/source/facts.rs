//! Facts about content, kept between runs: yes-or-no answers that depend
//! only on the bytes of a blob or tree (so only on its object id) and on
//! the binary that computed them, and records: bytes a reader computed
//! from several paths of a tree, kept under a digest of what it asked
//! ([`record_key`]). A record holds the ids it was computed from, and its
//! reader checks them against the tree at hand before using it: a stale
//! record is computed again, never trusted.
//!
//! The file lives in a cache directory outside the repository, one per
//! binary (its version, size and modification time name it), so a fact
//! computed by another build is never read. It is read whole and trusted
//! only when its header, length and checksum are right; anything else is
//! an empty store and every fact is computed again. A run writes the file
//! anew through a temporary file renamed into place, so concurrent runs
//! each leave a whole file (the last one wins) and a crash leaves the old
//! one. The store is bounded ([`MAX_FACTS`], [`MAX_RECORDS`],
//! [`MAX_RECORD_BYTES`]): beyond it, what this run did not use is dropped
//! first.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::ObjectId;

/// Most facts kept (23 bytes each on disk).
pub(crate) const MAX_FACTS: usize = 1 << 21;

/// Most records kept.
pub(crate) const MAX_RECORDS: usize = 1 << 20;

/// Most bytes of records kept.
pub(crate) const MAX_RECORD_BYTES: usize = 256 << 20;

/// Largest single record.
pub(crate) const MAX_RECORD_LEN: usize = 1 << 20;

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

const MAGIC: &[u8; 8] = b"GLFACTS2";

/// One fact: its answer, and whether this run used or made it.
#[derive(Clone, Copy)]
struct Fact {
    answer: bool,
    used: bool,
}

/// One record: its bytes, and whether this run used or made it.
#[derive(Clone)]
struct Record {
    bytes: Arc<[u8]>,
    used: bool,
}

type FactMap = HashMap<(Question, ObjectId), Fact, foldhash::fast::RandomState>;
type RecordMap = HashMap<ObjectId, Record, foldhash::fast::RandomState>;

/// What one run knows and learns; see the module doc.
pub(crate) struct Facts {
    file: Option<PathBuf>,
    binary: String,
    map: Mutex<FactMap>,
    records: Mutex<RecordMap>,
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
        let (map, records) = read_bounded(&file)
            .and_then(|bytes| decode(&bytes, &binary))
            .unwrap_or_default();
        let loaded = map.len() + records.len();
        Facts {
            file: Some(file),
            binary,
            map: Mutex::new(map),
            records: Mutex::new(records),
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

    fn lock(&self) -> std::sync::MutexGuard<'_, FactMap> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_records(&self) -> std::sync::MutexGuard<'_, RecordMap> {
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn count_learned(&self) {
        *self
            .learned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
    }

    /// The record kept under `key` (see [`record_key`]), to be checked by
    /// the caller before use.
    #[must_use]
    pub(crate) fn record(&self, key: ObjectId) -> Option<Arc<[u8]>> {
        let mut records = self.lock_records();
        let rec = records.get_mut(&key)?;
        rec.used = true;
        Some(Arc::clone(&rec.bytes))
    }

    /// Keeps `bytes` under `key`; a record larger than [`MAX_RECORD_LEN`]
    /// is not kept.
    pub(crate) fn put_record(&self, key: ObjectId, bytes: Vec<u8>) {
        if bytes.len() > MAX_RECORD_LEN {
            return;
        }
        let mut records = self.lock_records();
        // A record replaced by a different one is learned too: the file
        // must be written again.
        let changed = records.get(&key).is_none_or(|r| *r.bytes != bytes[..]);
        records.insert(
            key,
            Record {
                bytes: bytes.into(),
                used: true,
            },
        );
        drop(records);
        if changed {
            self.count_learned();
        }
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
            self.count_learned();
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
            facts.sort_unstable_by_key(|(k, f)| (!f.used, k.0 as u8, k.1));
            facts.truncate(MAX_FACTS);
            let records = self.lock_records();
            let mut kept: Vec<(&ObjectId, &Record)> = records.iter().collect();
            kept.sort_unstable_by_key(|(k, r)| (!r.used, **k));
            let mut total = 0usize;
            kept.retain(|(_, r)| {
                total = total.saturating_add(r.bytes.len());
                total <= MAX_RECORD_BYTES
            });
            kept.truncate(MAX_RECORDS);
            encode(&facts, &kept, &self.binary)
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

/// SHA-256, cut to an object id's 20 bytes: the file's checksum and the
/// records' keys need a digest no two contents share, not git's object
/// id, whose collision-detecting SHA-1 was most of the time spent opening
/// a store of 10,000 parses.
fn checksum(bytes: &[u8]) -> ObjectId {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    let mut id = [0; 20];
    id.copy_from_slice(&digest[..20]);
    ObjectId(id)
}

/// The header, the binary's identity, the facts, the records and a
/// checksum of it all.
fn encode(
    facts: &[(&(Question, ObjectId), &Fact)],
    records: &[(&ObjectId, &Record)],
    binary: &str,
) -> Vec<u8> {
    let record_bytes: usize = records.iter().map(|(_, r)| 24 + r.bytes.len()).sum();
    let mut out = Vec::with_capacity(48 + binary.len() + facts.len() * 22 + record_bytes);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(binary.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(binary.as_bytes());
    out.extend_from_slice(&(facts.len() as u64).to_le_bytes());
    for ((q, id), f) in facts {
        out.push(q.byte());
        out.extend_from_slice(&id.0);
        out.push(u8::from(f.answer));
    }
    out.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for (key, r) in records {
        out.extend_from_slice(&key.0);
        out.extend_from_slice(&u32::try_from(r.bytes.len()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&r.bytes);
    }
    let sum = checksum(&out);
    out.extend_from_slice(&sum.0);
    out
}

/// The facts and records of a file written by `binary`, or `None` when
/// anything in it is not exactly as [`encode`] writes it.
fn decode(bytes: &[u8], binary: &str) -> Option<(FactMap, RecordMap)> {
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
    if count > MAX_FACTS {
        return None;
    }
    let (fact_bytes, mut rest) = rest.split_at_checked(count.checked_mul(22)?)?;
    let mut map = HashMap::default();
    for rec in fact_bytes.chunks_exact(22) {
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
    let (count, more) = rest.split_at_checked(8)?;
    rest = more;
    let count = usize::try_from(u64::from_le_bytes(count.try_into().ok()?)).ok()?;
    if count > MAX_RECORDS {
        return None;
    }
    let mut records = HashMap::default();
    for _ in 0..count {
        let (key, more) = rest.split_at_checked(20)?;
        let (len, more) = more.split_at_checked(4)?;
        let len = usize::try_from(u32::from_le_bytes(len.try_into().ok()?)).ok()?;
        if len > MAX_RECORD_LEN {
            return None;
        }
        let (body, more) = more.split_at_checked(len)?;
        rest = more;
        records.insert(
            ObjectId(key.try_into().ok()?),
            Record {
                bytes: body.into(),
                used: false,
            },
        );
    }
    rest.is_empty().then_some((map, records))
}

/// The key of a record: a digest of the kind of question (`what`) and of
/// every part it depends on besides the tree's content, each part
/// delimited by its length so that no two lists of parts share a key.
#[must_use]
pub(crate) fn record_key(what: &str, parts: &[&[u8]]) -> ObjectId {
    let mut buf = Vec::with_capacity(64 + parts.iter().map(|p| p.len() + 8).sum::<usize>());
    for part in std::iter::once(what.as_bytes()).chain(parts.iter().copied()) {
        buf.extend_from_slice(&(part.len() as u64).to_le_bytes());
        buf.extend_from_slice(part);
    }
    checksum(&buf)
}

/// The file's bytes, unless it is missing or larger than a whole store.
fn read_bounded(file: &Path) -> Option<Vec<u8>> {
    let max = 64 + 4096 + MAX_FACTS * 22 + MAX_RECORDS * 24 + MAX_RECORD_BYTES;
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
        let key = record_key("test", &[b"a", b"bc"]);
        assert_ne!(key, record_key("test", &[b"ab", b"c"]));
        facts.put_record(key, b"record".to_vec());
        facts.save().unwrap_or_else(|e| panic!("{e}"));
        let again = Facts::open(dir.path());
        assert_eq!(again.stats().loaded, 3);
        assert_eq!(again.record(key).as_deref(), Some(&b"record"[..]));
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
        let bytes = encode(&refs, &[], "0.1.0 123-456");
        assert!(decode(&bytes, "0.1.0 123-456").is_some_and(|(m, _)| m.len() == 1));
        assert!(decode(&bytes, "0.1.0 123-457").is_none());
    }
}

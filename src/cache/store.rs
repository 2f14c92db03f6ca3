//! Facts about content, kept between runs: yes-or-no answers that depend
//! only on the bytes of a blob or tree (so only on its object id) and on
//! the binary that computed them, and records: bytes a reader computed
//! from several paths of a tree, kept under a digest of what it asked
//! ([`record_key`]). A record holds the ids it was computed from, and its
//! reader checks them against the tree at hand before using it: a stale
//! record is computed again, never trusted.
//!
//! The file lives in a cache directory outside the repository, one per
//! binary (its version and a digest of its executable name it), so a fact
//! computed by another build is never read, and one computed by a copy of
//! this build (a CI runner installs the binary afresh each run) is. It is
//! read whole and trusted only when its header, length, checksum, order and
//! offsets are right; anything else is an empty store and every fact is
//! computed again. Its tables are sorted by key and looked up where they
//! lie, so opening a store of a large fleet costs a read and a checksum,
//! not an index. A run writes the file anew through a temporary file
//! renamed into place, so concurrent runs each leave a whole file (the last
//! one wins) and a run that stops leaves the old one; a file that the
//! machine's crash leaves torn fails its checksum. The store is bounded
//! ([`MAX_FACTS`], [`MAX_RECORDS`], [`MAX_RECORD_BYTES`]): beyond it, what
//! this run did not use is dropped first.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// What a fact or record is kept under: a blob's or tree's object id, or
/// a [`record_key`]. The store knows nothing of git: any 20 bytes that name
/// their content will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Key(pub(crate) [u8; 20]);

type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Most facts kept (22 bytes each on disk).
pub(crate) const MAX_FACTS: usize = 1 << 21;

/// Most records kept.
pub(crate) const MAX_RECORDS: usize = 1 << 20;

/// Most bytes of records kept.
pub(crate) const MAX_RECORD_BYTES: usize = 256 << 20;

/// Largest single record.
pub(crate) const MAX_RECORD_LEN: usize = 1 << 20;

/// The question a fact answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    fn byte(self) -> u8 {
        self as u8
    }
}

const MAGIC: &[u8; 8] = b"GLFACTS4";

/// Bytes of the file's checksum, at its end.
const CHECKSUM_LEN: usize = 16;

/// Bytes of one fact on disk: question, id, answer.
const FACT_LEN: usize = 22;

/// Bytes of one record's entry in the table on disk: key, offset, length.
const ENTRY_LEN: usize = 28;

/// The facts and records of the file a run opened, read where they lie:
/// both tables are sorted by key, so a lookup is a binary search and
/// opening a store does no work per entry beyond checking it.
#[derive(Default)]
struct Stored {
    bytes: Vec<u8>,
    /// The facts, [`FACT_LEN`] bytes each, sorted by question and id.
    facts: std::ops::Range<usize>,
    /// The records' entries, [`ENTRY_LEN`] bytes each, sorted by key.
    table: std::ops::Range<usize>,
    /// The records' bytes, which the entries' offsets point into.
    bodies: std::ops::Range<usize>,
    /// Which facts and records this run used (the bound keeps those first).
    used_facts: Vec<AtomicBool>,
    used_records: Vec<AtomicBool>,
}

impl Stored {
    fn fact_count(&self) -> usize {
        self.facts.len() / FACT_LEN
    }

    fn record_count(&self) -> usize {
        self.table.len() / ENTRY_LEN
    }

    fn fact_at(&self, i: usize) -> &[u8] {
        let at = self.facts.start + i * FACT_LEN;
        &self.bytes[at..at + FACT_LEN]
    }

    fn entry_at(&self, i: usize) -> &[u8] {
        let at = self.table.start + i * ENTRY_LEN;
        &self.bytes[at..at + ENTRY_LEN]
    }

    /// The body of record `i` (its entry was checked when the file was read).
    fn body_at(&self, i: usize) -> &[u8] {
        let (offset, len) = span(self.entry_at(i));
        &self.bytes[self.bodies.start + offset..self.bodies.start + offset + len]
    }

    /// The index and answer of the fact `(q, id)`.
    fn find_fact(&self, q: Question, id: Key) -> Option<(usize, bool)> {
        let mut key = [0u8; 21];
        key[0] = q.byte();
        key[1..].copy_from_slice(&id.0);
        let i = search(self.fact_count(), &key, |i| &self.fact_at(i)[..21])?;
        Some((i, self.fact_at(i)[21] == 1))
    }

    /// The index of the record kept under `key`.
    fn find_record(&self, key: Key) -> Option<usize> {
        search(self.record_count(), &key.0, |i| &self.entry_at(i)[..20])
    }

    /// The store in `bytes` when it is exactly as [`encode`] writes it for
    /// `binary`: header, bounds, order, answers and offsets all right.
    fn decode(bytes: Vec<u8>, binary: &str) -> Option<Stored> {
        // Everything before the checksum, which seals it.
        let sealed = bytes.len().checked_sub(CHECKSUM_LEN)?;
        let body = &bytes[..sealed];
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<std::ops::Range<usize>> {
            let end = at.checked_add(n).filter(|&e| e <= body.len())?;
            let r = at..end;
            at = end;
            Some(r)
        };
        let word = |r: std::ops::Range<usize>| -> Option<usize> {
            let b = &body[r];
            let n = if b.len() == 4 {
                u64::from(u32::from_le_bytes(b.try_into().ok()?))
            } else {
                u64::from_le_bytes(b.try_into().ok()?)
            };
            usize::try_from(n).ok()
        };
        if body[take(8)?] != MAGIC[..] {
            return None;
        }
        let name_len = word(take(4)?)?;
        if body[take(name_len)?] != *binary.as_bytes() {
            return None;
        }
        let fact_count = word(take(8)?)?;
        if fact_count > MAX_FACTS {
            return None;
        }
        let facts = take(fact_count.checked_mul(FACT_LEN)?)?;
        let record_count = word(take(8)?)?;
        if record_count > MAX_RECORDS {
            return None;
        }
        let table = take(record_count.checked_mul(ENTRY_LEN)?)?;
        let body_len = word(take(8)?)?;
        let bodies = take(body_len)?;
        if at != body.len() {
            return None;
        }
        let stored = Stored {
            used_facts: (0..fact_count).map(|_| AtomicBool::new(false)).collect(),
            used_records: (0..record_count).map(|_| AtomicBool::new(false)).collect(),
            bytes,
            facts,
            table,
            bodies,
        };
        let facts_ok = || {
            (0..fact_count).all(|i| {
                let f = stored.fact_at(i);
                Question::from_byte(f[0]).is_some()
                    && f[21] <= 1
                    && (i == 0 || stored.fact_at(i - 1)[..21] < f[..21])
            })
        };
        let records_ok = || {
            (0..record_count).all(|i| {
                let e = stored.entry_at(i);
                let (offset, len) = span(e);
                len <= MAX_RECORD_LEN
                    && offset.checked_add(len).is_some_and(|end| end <= body_len)
                    && (i == 0 || stored.entry_at(i - 1)[..20] < e[..20])
            })
        };
        // The checksum and the tables' checks each read megabytes before a
        // warm run can start: side by side.
        let (body, sum) = stored.bytes.split_at(sealed);
        let (sum_ok, (facts_ok, records_ok)) = rayon::join(
            || file_checksum(body) == sum,
            || rayon::join(facts_ok, records_ok),
        );
        (sum_ok && facts_ok && records_ok).then_some(stored)
    }
}

/// The offset and length a record's table entry gives its bytes.
fn span(entry: &[u8]) -> (usize, usize) {
    let word = |at: usize| {
        u32::from_le_bytes([entry[at], entry[at + 1], entry[at + 2], entry[at + 3]]) as usize
    };
    (word(20), word(24))
}

/// The index in `0..n` of the entry whose key (`key_at`) is `key`, over
/// entries sorted by key.
///
/// Keys are digests, spread evenly: guessing where `key` lies from its
/// first eight bytes finds it in two or three looks where halving takes
/// seventeen at 100,000 entries (a warm run at 10,000 apps makes tens of
/// thousands of lookups, each look a cache miss in a table of megabytes).
/// Guesses narrow the range like halving does, so a store whose keys are
/// not spread evenly (damaged, or written by someone else) is still
/// searched correctly; after a few guesses the rest is halved, which
/// bounds every lookup by the binary search's steps plus those few.
fn search<'a>(n: usize, key: &[u8], key_at: impl Fn(usize) -> &'a [u8]) -> Option<usize> {
    use std::cmp::Ordering;
    let prefix = |k: &[u8]| {
        let mut p = [0u8; 8];
        let len = k.len().min(8);
        p[..len].copy_from_slice(&k[..len]);
        u64::from_be_bytes(p)
    };
    let target = prefix(key);
    let (mut lo, mut hi) = (0, n);
    for _ in 0..GUESSES {
        if hi - lo < 16 {
            break;
        }
        let (first, last) = (prefix(key_at(lo)), prefix(key_at(hi - 1)));
        if target < first || target > last {
            return None;
        }
        if first == last {
            break;
        }
        let span = u128::from(last - first);
        let offset = u128::from(target - first) * (hi - 1 - lo) as u128 / span;
        let guess = lo + usize::try_from(offset).unwrap_or(0).min(hi - 1 - lo);
        match key_at(guess).cmp(key) {
            Ordering::Less => lo = guess + 1,
            Ordering::Greater => hi = guess,
            Ordering::Equal => return Some(guess),
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match key_at(mid).cmp(key) {
            Ordering::Less => lo = mid + 1,
            Ordering::Greater => hi = mid,
            Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// Guesses [`search`] makes before it halves.
const GUESSES: usize = 4;

/// Shards of what a run learns, chosen by a key's first byte (keys are
/// digests): the workers of a cold run each add thousands, and one lock and
/// one counter they all took would make them wait on each other.
const SHARDS: usize = 16;

/// The shard of a key whose id is `id`.
fn shard_of(id: Key) -> usize {
    usize::from(id.0[0]) % SHARDS
}

/// One shard of [`Learned`], on a cache line of its own.
#[repr(align(128))]
struct Shard<K, V> {
    map: RwLock<FastMap<K, V>>,
    /// Entries in `map`: while none, a lookup takes no lock.
    entries: AtomicUsize,
    /// Entries added or replaced by different ones.
    learned: AtomicUsize,
}

/// Facts or records one run learned (new, or unlike the file's).
struct Learned<K, V> {
    shards: [Shard<K, V>; SHARDS],
}

impl<K, V> Default for Learned<K, V> {
    fn default() -> Self {
        Learned {
            shards: std::array::from_fn(|_| Shard {
                map: RwLock::default(),
                entries: AtomicUsize::new(0),
                learned: AtomicUsize::new(0),
            }),
        }
    }
}

impl<K, V> Learned<K, V> {
    fn shard(&self, id: Key) -> &Shard<K, V> {
        &self.shards[shard_of(id)]
    }

    fn learned(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.learned.load(Ordering::Relaxed))
            .sum()
    }
}

impl<K, V> Shard<K, V> {
    fn read(&self) -> Option<std::sync::RwLockReadGuard<'_, FastMap<K, V>>> {
        (self.entries.load(Ordering::Acquire) > 0).then(|| {
            self.map
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, FastMap<K, V>> {
        self.map
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The bytes of a record: borrowed where the file holds them (a warm run
/// of a large fleet reads thousands, each copied out before), or learned
/// by this run.
pub(crate) enum Record<'a> {
    Stored(&'a [u8]),
    Learned(Arc<[u8]>),
}

impl std::ops::Deref for Record<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Record::Stored(b) => b,
            Record::Learned(b) => b,
        }
    }
}

/// What one run knows and learns; see the module doc.
pub(crate) struct Facts {
    file: Option<PathBuf>,
    binary: String,
    /// What the file held when the run began.
    stored: Stored,
    new_answers: Learned<(Question, Key), bool>,
    new_records: Learned<Key, Arc<[u8]>>,
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
        let stored = read_bounded(&file)
            .and_then(|bytes| Stored::decode(bytes, &binary))
            .unwrap_or_default();
        Facts {
            file: Some(file),
            binary,
            stored,
            new_answers: Learned::default(),
            new_records: Learned::default(),
        }
    }

    /// The path of the file, when the store is kept between runs.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The record kept under `key` (see [`record_key`]), to be checked by
    /// the caller before use.
    #[must_use]
    pub(crate) fn record(&self, key: Key) -> Option<Record<'_>> {
        if let Some(r) = self
            .new_records
            .shard(key)
            .read()
            .and_then(|m| m.get(&key).cloned())
        {
            return Some(Record::Learned(r));
        }
        let i = self.stored.find_record(key)?;
        self.stored.used_records[i].store(true, Ordering::Relaxed);
        Some(Record::Stored(self.stored.body_at(i)))
    }

    /// Keeps `bytes` under `key`; a record larger than [`MAX_RECORD_LEN`]
    /// is not kept.
    pub(crate) fn put_record(&self, key: Key, bytes: Vec<u8>) {
        if bytes.len() > MAX_RECORD_LEN {
            return;
        }
        let shard = self.new_records.shard(key);
        let mut records = shard.write();
        if !records.contains_key(&key) {
            if let Some(i) = self.stored.find_record(key) {
                if self.stored.body_at(i) == bytes.as_slice() {
                    self.stored.used_records[i].store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
        // A record replaced by a different one is learned too: the file
        // must be written again.
        let bytes: Arc<[u8]> = bytes.into();
        let changed = match records.insert(key, Arc::clone(&bytes)) {
            None => {
                shard.entries.fetch_add(1, Ordering::Release);
                true
            }
            Some(previous) => previous != bytes,
        };
        if changed {
            shard.learned.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The known answer to `q` about `id`.
    #[must_use]
    pub(crate) fn get(&self, q: Question, id: impl Into<Key>) -> Option<bool> {
        let id = id.into();
        if let Some(a) = self
            .new_answers
            .shard(id)
            .read()
            .and_then(|m| m.get(&(q, id)).copied())
        {
            return Some(a);
        }
        let (i, answer) = self.stored.find_fact(q, id)?;
        self.stored.used_facts[i].store(true, Ordering::Relaxed);
        Some(answer)
    }

    /// Records the answer to `q` about `id`. An all-zero id is a
    /// placeholder, not content, and is never recorded.
    pub(crate) fn put(&self, q: Question, id: impl Into<Key>, answer: bool) {
        let id = id.into();
        if id.0 == [0; 20] {
            return;
        }
        let shard = self.new_answers.shard(id);
        let mut facts = shard.write();
        if !facts.contains_key(&(q, id)) {
            if let Some((i, known)) = self.stored.find_fact(q, id) {
                if known == answer {
                    self.stored.used_facts[i].store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
        if facts.insert((q, id), answer).is_none() {
            shard.entries.fetch_add(1, Ordering::Release);
            shard.learned.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What the run loaded and learned.
    #[must_use]
    pub(crate) fn stats(&self) -> FactStats {
        FactStats {
            loaded: self.stored.fact_count() + self.stored.record_count(),
            learned: self.new_answers.learned() + self.new_records.learned(),
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
            let answers: Vec<_> = self.new_answers.shards.iter().map(Shard::write).collect();
            let learned = |key: &(Question, Key)| answers[shard_of(key.1)].contains_key(key);
            let s = &self.stored;
            // (used, key, answer): the file's facts this run did not
            // replace, then the learned ones.
            let mut facts: Vec<(bool, (Question, Key), bool)> = (0..s.fact_count())
                .filter_map(|i| {
                    let f = s.fact_at(i);
                    let key = (Question::from_byte(f[0])?, Key(f[1..21].try_into().ok()?));
                    let used = s.used_facts[i].load(Ordering::Relaxed);
                    (!learned(&key)).then_some((used, key, f[21] == 1))
                })
                .chain(
                    answers
                        .iter()
                        .flat_map(|m| m.iter().map(|(k, a)| (true, *k, *a))),
                )
                .collect();
            if facts.len() > MAX_FACTS {
                // Used facts first, so the bound drops the stale ones.
                facts.sort_unstable_by_key(|(used, key, _)| (!used, *key));
                facts.truncate(MAX_FACTS);
            }
            facts.sort_unstable_by_key(|(_, key, _)| *key);
            let kept: Vec<_> = self.new_records.shards.iter().map(Shard::write).collect();
            let learned = |key: &Key| kept[shard_of(*key)].contains_key(key);
            let mut records: Vec<(bool, Key, &[u8])> = (0..s.record_count())
                .filter_map(|i| {
                    let key = Key(s.entry_at(i)[..20].try_into().ok()?);
                    let used = s.used_records[i].load(Ordering::Relaxed);
                    (!learned(&key)).then(|| (used, key, s.body_at(i)))
                })
                .chain(
                    kept.iter()
                        .flat_map(|m| m.iter().map(|(k, r)| (true, *k, &r[..]))),
                )
                .collect();
            let total: usize = records.iter().map(|(_, _, b)| b.len()).sum();
            if records.len() > MAX_RECORDS || total > MAX_RECORD_BYTES {
                records.sort_unstable_by_key(|(used, key, _)| (!used, *key));
                let mut total = 0usize;
                records.retain(|(_, _, b)| {
                    total = total.saturating_add(b.len());
                    total <= MAX_RECORD_BYTES
                });
                records.truncate(MAX_RECORDS);
            }
            records.sort_unstable_by_key(|(_, key, _)| *key);
            let facts: Vec<((Question, Key), bool)> =
                facts.into_iter().map(|(_, k, a)| (k, a)).collect();
            let records: Vec<(Key, &[u8])> = records.into_iter().map(|(_, k, b)| (k, b)).collect();
            encode(&facts, &records, &self.binary)
        };
        let dir = file.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir)?;
        // Not synced to disk: a file a crash leaves torn fails its
        // checksum and is an empty store, which costs a run its speed only.
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&body)?;
        tmp.persist(file).map_err(|e| e.error)?;
        remove_old_stores(dir, file);
        Ok(())
    }
}

/// Stores of other binaries kept beside this one's: a few builds may share
/// a cache directory at once (two versions on one runner), but each upgrade
/// would otherwise leave its store behind for good.
const OTHER_STORES: usize = 3;

/// Removes from `dir` the stores of other binaries beyond the
/// [`OTHER_STORES`] written last. Best effort: a store that cannot be
/// removed costs disk space, never an answer.
fn remove_old_stores(dir: &Path, own: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut others: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("facts-") && name.ends_with(".bin") && e.path() != own
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_unstable_by_key(|(written, _)| std::cmp::Reverse(*written));
    for (_, path) in others.into_iter().skip(OTHER_STORES) {
        let _ = std::fs::remove_file(path);
    }
}

/// Names the running binary: its version and a digest of its executable's
/// bytes, so two builds of one version differ and a copy of one build (the
/// GitHub Action installs the binary afresh at every run) is the same.
/// Where the executable cannot be read, its size and modification time
/// stand for its bytes: a copy then starts a store of its own.
fn binary_identity() -> String {
    let exe = std::env::current_exe().ok();
    let content = match exe.as_deref().map(|p| (p, content_digest(p))) {
        Some((_, Some(d))) => format!("xxh3-{d:032x}"),
        Some((p, None)) => size_and_mtime(p).unwrap_or_default(),
        None => String::new(),
    };
    format!("{} {content}", env!("CARGO_PKG_VERSION"))
}

/// The size and modification time of the file at `path`.
fn size_and_mtime(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(format!("{}-{mtime}", m.len()))
}

/// A digest of the file at `path`: XXH3-128 of its length and of the
/// XXH3-128 of each half, the halves read in pieces side by side. The
/// executable is in the page cache, yet reading and hashing the 12 MB
/// release binary on one core was about 3 ms before the store could be
/// named. A digest against accidents, not against whoever writes the
/// cache directory (see [`file_checksum`]).
fn content_digest(path: &Path) -> Option<u128> {
    use std::io::{Read as _, Seek as _};
    let len = std::fs::metadata(path).ok()?.len();
    let half = len / 2;
    let hash = |start: u64, n: u64| -> Option<u128> {
        let mut file = std::fs::File::open(path).ok()?;
        file.seek(std::io::SeekFrom::Start(start)).ok()?;
        let mut part = file.take(n);
        let mut hasher = xxhash_rust::xxh3::Xxh3Default::new();
        let mut buf = vec![0u8; 1 << 17];
        let mut read = 0u64;
        loop {
            match part.read(&mut buf) {
                Ok(0) => return (read == n).then(|| hasher.digest128()),
                Ok(k) => {
                    hasher.update(&buf[..k]);
                    read += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    };
    let (first, second) = rayon::join(|| hash(0, half), || hash(half, len - half));
    let mut whole = Vec::with_capacity(40);
    whole.extend_from_slice(&len.to_le_bytes());
    whole.extend_from_slice(&first?.to_le_bytes());
    whole.extend_from_slice(&second?.to_le_bytes());
    Some(xxhash_rust::xxh3::xxh3_128(&whole))
}

/// The first 16 hex digits of the SHA-256 of `bytes`: the name of a
/// binary's store, the same for every run of that binary.
fn short_hash(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's checksum: XXH3-128, which finds a torn or damaged file. A
/// cryptographic digest would guard nothing more, since whoever can write
/// the cache directory can compute any checksum (each reader of a record
/// refuses the shapes no writer makes), and SHA-256 of a 20 MB store of
/// 10,000 apps was 5% of a warm one-app diff, before any other work.
fn file_checksum(bytes: &[u8]) -> [u8; CHECKSUM_LEN] {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
}

/// The header, the binary's identity, the facts, the records' table and
/// bytes, and a checksum of it all. Both lists come sorted by key.
fn encode(facts: &[((Question, Key), bool)], records: &[(Key, &[u8])], binary: &str) -> Vec<u8> {
    let body_len: usize = records.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(
        64 + binary.len() + facts.len() * FACT_LEN + records.len() * ENTRY_LEN + body_len,
    );
    let word = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&word(binary.len()));
    out.extend_from_slice(binary.as_bytes());
    out.extend_from_slice(&(facts.len() as u64).to_le_bytes());
    for ((q, id), answer) in facts {
        out.push(q.byte());
        out.extend_from_slice(&id.0);
        out.push(u8::from(*answer));
    }
    out.extend_from_slice(&(records.len() as u64).to_le_bytes());
    let mut offset = 0usize;
    for (key, body) in records {
        out.extend_from_slice(&key.0);
        out.extend_from_slice(&word(offset));
        out.extend_from_slice(&word(body.len()));
        offset += body.len();
    }
    out.extend_from_slice(&(body_len as u64).to_le_bytes());
    for (_, body) in records {
        out.extend_from_slice(body);
    }
    let sum = file_checksum(&out);
    out.extend_from_slice(&sum);
    out
}

/// The key of a record: a digest of the kind of question (`what`) and of
/// every part it depends on besides the tree's content, each part
/// delimited by its length so that no two lists of parts share a key.
#[must_use]
pub(crate) fn record_key(what: &str, parts: &[&[u8]]) -> Key {
    let mut key = RecordKey::new(what);
    for part in parts {
        key.part(part);
    }
    key.finish()
}

/// A [`record_key`] built part by part, for keys with many parts. The
/// parts are gathered and digested at once: fed a dozen small pieces one
/// by one, SHA-256 spent more than ten times as long buffering them as
/// compressing (a profile of the warm run at 10,000 apps, which builds
/// every app's footprint key).
pub(crate) struct RecordKey(Vec<u8>);

impl RecordKey {
    /// The key of a `what` record, before its parts.
    #[must_use]
    pub(crate) fn new(what: &str) -> RecordKey {
        let mut key = RecordKey(Vec::with_capacity(256));
        key.part(what.as_bytes());
        key
    }

    /// Adds one part, delimited by its length.
    pub(crate) fn part(&mut self, bytes: &[u8]) {
        self.0
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
    }

    /// The key.
    #[must_use]
    pub(crate) fn finish(self) -> Key {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(&self.0);
        let mut id = [0; 20];
        id.copy_from_slice(&digest[..20]);
        Key(id)
    }
}

/// The file's bytes, unless it is missing, larger than a whole store, or
/// not a regular file: a symlink at its path is not followed and a FIFO
/// is not waited on (whoever can write the cache directory could otherwise
/// steer or stall the run), both read as an empty store.
fn read_bounded(file: &Path) -> Option<Vec<u8>> {
    let max = 64 + 4096 + MAX_FACTS * FACT_LEN + MAX_RECORDS * ENTRY_LEN + MAX_RECORD_BYTES;
    let handle = crate::local_files::read_regular(file, max as u64).ok()??;
    let len = usize::try_from(handle.metadata().ok()?.len()).ok()?;
    read_halves(&handle, len)
}

#[cfg(not(unix))]
fn read_halves(mut handle: &std::fs::File, len: usize) -> Option<Vec<u8>> {
    let mut bytes = vec![0u8; len];
    std::io::Read::read_exact(&mut handle, &mut bytes).ok()?;
    Some(bytes)
}

#[cfg(unix)]
fn read_halves(handle: &std::fs::File, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt as _;
    // Read in two halves side by side: copying a store of a large fleet
    // (20 MB at 10,000 apps) into fresh pages is a few milliseconds on one
    // core before anything else can start. Both halves are read from the
    // one handle at their offsets.
    let mut bytes = vec![0u8; len];
    let (a, b) = bytes.split_at_mut(len / 2);
    let (ra, rb) = rayon::join(
        || handle.read_exact_at(a, 0),
        || handle.read_exact_at(b, (len / 2) as u64),
    );
    (ra.is_ok() && rb.is_ok()).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8) -> Key {
        Key([b; 20])
    }

    #[test]
    fn a_binary_is_named_by_its_bytes_not_by_when_it_was_copied() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let build = dir.path().join("build");
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&build, &bytes).unwrap_or_else(|e| panic!("{e}"));
        // A copy made later (as a CI runner installs the binary each run).
        std::thread::sleep(std::time::Duration::from_millis(20));
        let copy = dir.path().join("copy");
        std::fs::copy(&build, &copy).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(
            std::fs::metadata(&build).and_then(|m| m.modified()).ok(),
            std::fs::metadata(&copy).and_then(|m| m.modified()).ok()
        );
        assert_eq!(content_digest(&build), content_digest(&copy));
        // Other builds of the same size, one byte apart in either half
        // (each hashed on its own), past the first piece read.
        assert!(content_digest(&build).is_some());
        for at in [140_000, 200_000] {
            let mut other = bytes.clone();
            other[at] ^= 1;
            let rebuilt = dir.path().join("rebuilt");
            std::fs::write(&rebuilt, &other).unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(content_digest(&build), content_digest(&rebuilt), "{at}");
        }
        assert_eq!(content_digest(&dir.path().join("missing")), None);
    }

    #[test]
    fn facts_survive_a_save_and_a_damaged_file_is_an_empty_store() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let facts = Facts::open(dir.path());
        assert_eq!(facts.get(Question::MayDeclare, id(1)), None);
        facts.put(Question::MayDeclare, id(1), false);
        facts.put(Question::PlainSubtree, id(1), true);
        facts.put(Question::PlainSubtree, Key([0; 20]), true);
        let key = record_key("test", &[b"a", b"bc"]);
        assert_ne!(key, record_key("test", &[b"ab", b"c"]));
        // The digest of each part after its length: keys of stores written
        // by earlier builds of a version stay the same.
        let mut spelled = Vec::new();
        for part in [&b"test"[..], b"a", b"bc"] {
            spelled.extend_from_slice(&(part.len() as u64).to_le_bytes());
            spelled.extend_from_slice(part);
        }
        let digest = <sha2::Sha256 as sha2::Digest>::digest(&spelled);
        assert_eq!(key.0[..], digest[..20]);
        facts.put_record(key, b"record".to_vec());
        facts.save().unwrap_or_else(|e| panic!("{e}"));
        let again = Facts::open(dir.path());
        assert_eq!(again.stats().loaded, 3);
        assert_eq!(again.record(key).as_deref(), Some(&b"record"[..]));
        assert_eq!(again.get(Question::MayDeclare, id(1)), Some(false));
        assert_eq!(again.get(Question::PlainSubtree, id(1)), Some(true));
        assert_eq!(again.get(Question::PlainSubtree, Key([0; 20])), None);
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
    fn a_save_keeps_the_three_stores_of_other_binaries_written_last() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let day = std::time::Duration::from_secs(86_400);
        let now = std::time::SystemTime::now();
        for (i, name) in [
            "facts-a.bin",
            "facts-b.bin",
            "facts-c.bin",
            "facts-d.bin",
            "facts-e.bin",
        ]
        .iter()
        .enumerate()
        {
            let path = dir.path().join(name);
            std::fs::write(&path, b"old").unwrap_or_else(|e| panic!("{e}"));
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("{e}"));
            let age = u32::try_from(i).unwrap_or(0) + 1;
            file.set_modified(now - day * age)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap_or_else(|e| panic!("{e}"));
        let facts = Facts::open(dir.path());
        facts.put(Question::MayDeclare, id(1), true);
        facts.save().unwrap_or_else(|e| panic!("{e}"));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let own = facts
            .file()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut expected = vec![
            "facts-a.bin".to_string(),
            "facts-b.bin".to_string(),
            "facts-c.bin".to_string(),
            "notes.txt".to_string(),
            own,
        ];
        expected.sort();
        assert_eq!(names, expected);
    }

    #[test]
    fn another_binary_does_not_read_the_facts() {
        let bytes = encode(
            &[((Question::MayDeclare, id(7)), true)],
            &[],
            "0.1.0 123-456",
        );
        assert!(Stored::decode(bytes.clone(), "0.1.0 123-456").is_some_and(|s| s.fact_count() == 1));
        assert!(Stored::decode(bytes, "0.1.0 123-457").is_none());
    }

    /// `bytes` with a checksum made for them, as a buggy writer would.
    fn sealed(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes.truncate(bytes.len() - CHECKSUM_LEN);
        let sum = file_checksum(&bytes);
        bytes.extend_from_slice(&sum);
        bytes
    }

    #[test]
    fn a_lookup_finds_every_key_and_no_other_however_the_keys_are_spread() {
        // Digests (even), one shared prefix (guesses cannot help), and
        // clusters with gaps (guesses land far off).
        let digest = |i: u32| record_key("t", &[&i.to_le_bytes()]).0.to_vec();
        let shared = |i: u32| {
            let mut k = vec![7u8; 12];
            k.extend_from_slice(&(i * 2).to_be_bytes());
            k
        };
        let clustered = |i: u32| {
            let hi = if i.is_multiple_of(3) { 0x01u8 } else { 0xf0 };
            let mut k = vec![hi];
            k.extend_from_slice(&(i * 2).to_be_bytes());
            k.extend_from_slice(&[0; 11]);
            k
        };
        let spreads: [&dyn Fn(u32) -> Vec<u8>; 3] = [&digest, &shared, &clustered];
        for make in spreads {
            for n in [0u32, 1, 2, 15, 16, 17, 1000] {
                let mut keys: Vec<Vec<u8>> = (0..n).map(make).collect();
                keys.sort();
                let at = |i: usize| keys[i].as_slice();
                for (i, k) in keys.iter().enumerate() {
                    assert_eq!(search(keys.len(), k, at), Some(i));
                    // Just above a present key, and below the first.
                    let mut above = k.clone();
                    above.push(0);
                    assert_eq!(search(keys.len(), &above, at), None);
                }
                assert_eq!(search(keys.len(), &[0u8; 16], at), None);
                assert_eq!(search(keys.len(), &[0xffu8; 16], at), None);
            }
        }
    }

    #[test]
    fn a_store_out_of_order_or_pointing_outside_itself_is_not_read() {
        let name = "0.1.0 1-2";
        let facts = [
            ((Question::MayDeclare, id(1)), true),
            ((Question::MayDeclare, id(2)), false),
        ];
        let records: [(Key, &[u8]); 2] = [(id(3), b"abc"), (id(4), b"de")];
        let good = encode(&facts, &records, name);
        let stored = Stored::decode(good.clone(), name).unwrap_or_else(|| panic!("well formed"));
        assert_eq!(
            stored.find_fact(Question::MayDeclare, id(2)),
            Some((1, false))
        );
        assert_eq!(stored.find_fact(Question::PlainSubtree, id(2)), None);
        assert_eq!(
            stored.find_record(id(4)).map(|i| stored.body_at(i)),
            Some(&b"de"[..])
        );
        assert_eq!(stored.find_record(id(5)), None);
        // Two facts swapped: a binary search would miss one, so the store
        // is refused.
        let facts_at = 8 + 4 + name.len() + 8;
        let mut swapped = good.clone();
        swapped[facts_at..facts_at + FACT_LEN]
            .copy_from_slice(&good[facts_at + FACT_LEN..facts_at + 2 * FACT_LEN]);
        swapped[facts_at + FACT_LEN..facts_at + 2 * FACT_LEN]
            .copy_from_slice(&good[facts_at..facts_at + FACT_LEN]);
        assert!(Stored::decode(sealed(swapped), name).is_none());
        // A record whose length runs past the records' bytes.
        let table_at = facts_at + 2 * FACT_LEN + 8;
        let mut long = good.clone();
        long[table_at + ENTRY_LEN + 24] = 9;
        assert!(Stored::decode(sealed(long), name).is_none());
        // An answer that is neither yes nor no.
        let mut odd = good;
        odd[facts_at + 21] = 2;
        assert!(Stored::decode(sealed(odd), name).is_none());
    }

    #[test]
    fn what_a_run_learns_is_kept_beside_the_stored_facts_and_a_replaced_record_wins() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let first = Facts::open(dir.path());
        first.put(Question::MayDeclare, id(1), true);
        first.put_record(id(9), b"old".to_vec());
        first.save().unwrap_or_else(|e| panic!("{e}"));
        let second = Facts::open(dir.path());
        // Known already: nothing learned, nothing to write.
        second.put(Question::MayDeclare, id(1), true);
        second.put_record(id(9), b"old".to_vec());
        assert_eq!(second.stats().learned, 0);
        second.put(Question::PlainSubtree, id(2), false);
        second.put_record(id(9), b"new".to_vec());
        assert_eq!(second.stats().learned, 2);
        assert_eq!(second.record(id(9)).as_deref(), Some(&b"new"[..]));
        second.save().unwrap_or_else(|e| panic!("{e}"));
        let third = Facts::open(dir.path());
        assert_eq!(third.stats().loaded, 3);
        assert_eq!(third.get(Question::MayDeclare, id(1)), Some(true));
        assert_eq!(third.get(Question::PlainSubtree, id(2)), Some(false));
        assert_eq!(third.record(id(9)).as_deref(), Some(&b"new"[..]));
    }
}

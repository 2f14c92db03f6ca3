//! The parse cache of one run: each file's YAML stream, shared JSON values
//! and Helm template sets parsed once per content, under the run's budget of
//! rendered objects.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::source::{FastMap, ObjectId};
use goyaml::json::LazyValue;
use goyaml::{Dialect, Doc, YamlError};

use super::{kept_parse, over_budget_message, RenderError, MAX_RENDERED_OBJECTS};

/// Parsed YAML streams keyed by blob id (and dialect), shared by every
/// render of a run: a file unchanged between revisions is parsed once, and
/// so is a base read by many overlays. Each entry is filled exactly once
/// even when several threads ask for it together (the others wait).
#[derive(Default)]
pub struct ParseCache {
    map: Mutex<FastMap<(ObjectId, Dialect), Arc<ParseSlot>>>,
    parses: AtomicUsize,
    bytes: AtomicUsize,
    /// Objects rendered so far in this run (see [`MAX_RENDERED_OBJECTS`]).
    rendered: AtomicUsize,
    /// Helm charts' parsed templates by the digest of their names and
    /// sources: a chart 500 apps render is parsed once per run.
    template_sets: Mutex<HashMap<[u8; 32], Arc<gotemplate::TemplateSet>>>,
    /// Where those parses are kept between runs ([`kept_parse`]).
    kept: Option<Arc<crate::cache::Facts>>,
    /// Parses taken from `kept` instead of the blob.
    kept_hits: AtomicUsize,
    /// Each document of a parse as one shared value, for readers that
    /// keep documents (the inventory scan): both revisions of a diff then
    /// hold one object for an unchanged file, compared by address.
    shared: Mutex<SharedValues>,
}

type SharedValues = FastMap<(ObjectId, Dialect), Arc<[Arc<LazyValue>]>>;

/// Most distinct template sets a run keeps; past it a chart is parsed for
/// each render (still right, only slower), so memory stays bounded.
const MAX_TEMPLATE_SETS: usize = 64;

/// One parsed file, shared.
pub(crate) type ParsedStream = Arc<Result<Vec<Doc>, YamlError>>;

/// A cache entry: the parse, filled by the first thread that asks for it,
/// and, for a blob parsed as sigs.k8s.io/yaml from a content-addressed
/// tree, what readers test in its bytes, so that a later reader of the
/// parse need not read the blob. One entry holds both: a warm run of a
/// large fleet asks for tens of thousands, each lookup a cache miss.
#[derive(Default)]
struct ParseSlot {
    parsed: OnceLock<ParsedStream>,
    flags: OnceLock<kept_parse::Flags>,
}

impl ParseCache {
    /// A cache that keeps its sigs.k8s.io/yaml parses of content-addressed
    /// blobs in `facts`, and takes them from there ([`kept_parse`]).
    #[must_use]
    pub(crate) fn with_kept(facts: Option<Arc<crate::cache::Facts>>) -> ParseCache {
        ParseCache {
            kept: facts,
            ..ParseCache::default()
        }
    }

    /// The sigs.k8s.io/yaml parse of content-addressed blob `id`, with
    /// what readers test in its bytes, when known without reading the
    /// blob: parsed earlier in this run, or kept by an earlier one.
    pub(crate) fn known_sigs(&self, id: ObjectId) -> Option<(ParsedStream, kept_parse::Flags)> {
        let slot = self.slot(id, Dialect::SigsYaml);
        if let Some(parsed) = slot.parsed.get() {
            let flags = *slot.flags.get()?;
            return Some((Arc::clone(parsed), flags));
        }
        let (flags, docs) = kept_parse::kept(self.kept.as_deref()?, id)?;
        // The flags are a function of the bytes: whoever sets them first
        // sets these.
        let _ = slot.flags.set(flags);
        let mut fresh = false;
        let parsed = slot.parsed.get_or_init(|| {
            fresh = true;
            Arc::new(Ok(docs))
        });
        if fresh {
            self.kept_hits.fetch_add(1, Ordering::Relaxed);
        }
        Some((Arc::clone(parsed), flags))
    }

    /// [`ParseCache::get_or_parse_as`] for a blob of a content-addressed
    /// tree (`content_addressed`): a sigs.k8s.io/yaml parse is then known
    /// to [`ParseCache::known_sigs`], and kept between runs.
    pub(crate) fn get_or_parse_in(
        &self,
        id: ObjectId,
        bytes: &[u8],
        dialect: Dialect,
        content_addressed: bool,
    ) -> ParsedStream {
        let slot = self.slot(id, dialect);
        let parsed = self.parse_into(&slot, bytes, dialect);
        if !content_addressed || dialect != Dialect::SigsYaml || id.0 == [0; 20] {
            return parsed;
        }
        let Ok(docs) = parsed.as_ref() else {
            return parsed;
        };
        let flags = kept_parse::Flags::of(bytes);
        let first = slot.flags.set(flags).is_ok();
        // Only blobs the inventory scan parses at every run are worth
        // keeping: those that may declare an Argo CD object (Application
        // files, read again by each app-of-apps rendering them).
        let worth = first && flags.has(kept_parse::Flags::MAY_DECLARE);
        if let Some(facts) = self.kept.as_deref().filter(|_| worth) {
            kept_parse::keep(facts, id, flags, docs);
        }
        parsed
    }

    /// The documents `docs` of blob `id` parsed in `dialect`, each as one
    /// value shared by every caller.
    pub(crate) fn shared_values(
        &self,
        id: ObjectId,
        dialect: Dialect,
        docs: &[Doc],
    ) -> Arc<[Arc<LazyValue>]> {
        let mut shared = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            shared
                .entry((id, dialect))
                .or_insert_with(|| docs.iter().map(|d| Arc::clone(&d.value)).collect()),
        )
    }

    /// How many parses were taken from those kept between runs.
    #[must_use]
    pub(crate) fn kept_hits(&self) -> usize {
        self.kept_hits.load(Ordering::Relaxed)
    }

    /// The template set parsed from the sources digested as `key`, parsing
    /// it with `parse` the first time. A failed parse is not kept.
    ///
    /// # Errors
    /// What `parse` returns.
    pub(crate) fn template_set<E>(
        &self,
        key: [u8; 32],
        parse: impl FnOnce() -> Result<gotemplate::TemplateSet, E>,
    ) -> Result<Arc<gotemplate::TemplateSet>, E> {
        if let Some(set) = self
            .template_sets
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(set);
        }
        let set = Arc::new(parse()?);
        if let Ok(mut m) = self.template_sets.lock() {
            if m.len() < MAX_TEMPLATE_SETS {
                m.insert(key, set.clone());
            }
        }
        Ok(set)
    }

    /// Counts `n` rendered objects against the run's budget.
    ///
    /// # Errors
    /// Once the run has rendered more than [`MAX_RENDERED_OBJECTS`].
    pub(crate) fn charge(&self, n: usize) -> Result<(), RenderError> {
        let total = self
            .rendered
            .fetch_add(n, Ordering::Relaxed)
            .saturating_add(n);
        if total > MAX_RENDERED_OBJECTS {
            return Err(RenderError::content(over_budget_message()));
        }
        Ok(())
    }

    /// Whether the run has rendered more than [`MAX_RENDERED_OBJECTS`].
    #[must_use]
    pub(crate) fn over_budget(&self) -> bool {
        self.rendered.load(Ordering::Relaxed) > MAX_RENDERED_OBJECTS
    }

    /// Parses `bytes` in a given dialect, or returns the earlier parse.
    pub(crate) fn get_or_parse_as(
        &self,
        id: ObjectId,
        bytes: &[u8],
        dialect: Dialect,
    ) -> ParsedStream {
        self.parse_into(&self.slot(id, dialect), bytes, dialect)
    }

    /// The entry of blob `id` in `dialect`, made empty if there is none.
    fn slot(&self, id: ObjectId, dialect: Dialect) -> Arc<ParseSlot> {
        Arc::clone(
            self.map
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry((id, dialect))
                .or_default(),
        )
    }

    /// The parse `slot` holds, parsing `bytes` into it if it holds none.
    fn parse_into(&self, slot: &ParseSlot, bytes: &[u8], dialect: Dialect) -> ParsedStream {
        Arc::clone(slot.parsed.get_or_init(|| {
            self.parses.fetch_add(1, Ordering::Relaxed);
            self.bytes.fetch_add(bytes.len(), Ordering::Relaxed);
            Arc::new(match std::str::from_utf8(bytes) {
                Ok(text) => goyaml::load_all_as(text, dialect, &goyaml::Limits::default()),
                Err(e) => Err(YamlError {
                    message: format!("file is not valid UTF-8 (byte {})", e.valid_up_to()),
                    line: 1,
                    column: 1,
                    go_yaml: None,
                }),
            })
        }))
    }

    /// How many blobs were parsed (cache misses) so far.
    #[must_use]
    pub(crate) fn parses(&self) -> usize {
        self.parses.load(Ordering::Relaxed)
    }

    /// How many bytes of YAML were parsed so far.
    #[must_use]
    pub(crate) fn parsed_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_set_is_parsed_once_per_content_and_the_cache_stays_bounded() {
        use gotemplate::{FuncSet, MissingKey, TemplateSet};
        let cache = ParseCache::default();
        let parses = AtomicUsize::new(0);
        let parse = || {
            parses.fetch_add(1, Ordering::Relaxed);
            Ok::<_, String>(TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero))
        };
        let first = cache.template_set([1; 32], parse).expect("parses");
        let again = cache.template_set([1; 32], parse).expect("cached");
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(parses.load(Ordering::Relaxed), 1);
        // A failed parse is not kept: the next render parses again.
        assert!(cache
            .template_set([2; 32], || Err::<TemplateSet, _>("bad"))
            .is_err());
        cache.template_set([2; 32], parse).expect("parses");
        assert_eq!(parses.load(Ordering::Relaxed), 2);
        for i in 0..=u8::try_from(MAX_TEMPLATE_SETS).expect("small") {
            cache
                .template_set([i.wrapping_add(3); 32], parse)
                .expect("parses");
        }
        let kept = cache
            .template_sets
            .lock()
            .map(|m| m.len())
            .unwrap_or_default();
        assert_eq!(kept, MAX_TEMPLATE_SETS);
    }

    #[test]
    fn a_blob_is_parsed_once_per_dialect_even_when_threads_race() {
        let cache = ParseCache::default();
        let id = ObjectId([7; 20]);
        let text = b"namePrefix: on\n";
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| cache.get_or_parse_as(id, text, Dialect::Kyaml));
            }
        });
        assert_eq!(cache.parses(), 1);
        // sigs.k8s.io/yaml reads `on` as true, go-yaml v3 as a string: a
        // kustomization needs its own parse, cached separately.
        let sigs = cache.get_or_parse_as(id, text, Dialect::SigsYaml);
        let kyaml = cache.get_or_parse_as(id, text, Dialect::Kyaml);
        assert_eq!(cache.parses(), 2);
        let first = |p: &ParsedStream| p.as_ref().as_ref().map(|d| (*d[0].value).clone()).ok();
        assert_eq!(first(&sigs), Some(serde_json::json!({"namePrefix": true})));
        assert_eq!(first(&kyaml), Some(serde_json::json!({"namePrefix": "on"})));
    }
}

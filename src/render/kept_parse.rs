//! Parses kept between runs ([`crate::cache`] records), so that a
//! warm run neither reads nor parses a blob it parsed before as
//! sigs.k8s.io/yaml (the dialect of the inventory scan and the directory
//! renderer) and that may declare an Argo CD object: an Application file
//! of a large fleet is read by both at every run, whatever changed.
//!
//! A blob id is its content, so a record keyed by it describes that
//! content whatever tree or path holds it. The record holds the documents
//! (JSON values in a binary form, [`put_value`]: decoding it is a walk with
//! no text to scan, and a warm run reads every Application file of a
//! fleet, most of them only in part, [`LazyValue`]) with their index and line, and what those readers test in the
//! bytes ([`Flags`]); a digest of the whole closes it. A record is kept
//! only when decoding it gives back exactly the parse it was made from,
//! and used only when its digest, lengths and values are right: anything
//! else is parsed again from the blob, never trusted. Failed parses are
//! not kept.

use crate::cache::{record_key, Facts};
use crate::source::ObjectId;
use goyaml::json::encoded::{put_value, Reader, MAX_NESTING};
use goyaml::json::LazyValue;
use goyaml::Doc;

/// The marker that makes Argo CD's directory source skip a file
/// (`reposerver/repository/repository.go` `skipFileRenderingMarker`).
const SKIP_FILE_RENDERING: &[u8] = b"+argocd:skip-file-rendering";

/// What the readers of a parsed blob test in its bytes: the one place
/// those tests are made, whether the parse is kept or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Flags(u8);

impl Flags {
    /// The inventory scan's byte test passed: the blob may declare an Argo
    /// CD object, a CRD or a setting.
    pub(crate) const MAY_DECLARE: u8 = 1;
    /// The blob holds Argo CD's `+argocd:skip-file-rendering` marker.
    pub(crate) const SKIP_MARKER: u8 = 2;
    /// The blob spells `apiVersion:`, `kind:` and `metadata:`.
    pub(crate) const LOOKS_LIKE_MANIFEST: u8 = 4;

    const ALL: u8 = 7;

    /// The flags of `bytes`.
    #[must_use]
    pub(crate) fn of(bytes: &[u8]) -> Flags {
        let has = |n: &[u8]| memchr::memmem::find(bytes, n).is_some();
        let mut f = 0;
        if may_declare(bytes) {
            f |= Self::MAY_DECLARE;
        }
        if has(SKIP_FILE_RENDERING) {
            f |= Self::SKIP_MARKER;
        }
        if has(b"apiVersion:") && has(b"kind:") && has(b"metadata:") {
            f |= Self::LOOKS_LIKE_MANIFEST;
        }
        Flags(f)
    }

    /// Whether `flag` is set.
    #[must_use]
    pub(crate) fn has(self, flag: u8) -> bool {
        self.0 & flag != 0
    }
}

/// The inventory scan's byte test (`argocd::scan`), here because the
/// parses kept are those of blobs that pass it: whether `bytes` may declare an Application,
/// ApplicationSet, AppProject, CRD, cluster Secret, Argo CD setting or
/// config-management plugin definition.
/// Most files naming `argoproj.io` only carry sync annotations; an
/// Application or ApplicationSet also spells out its kind, and a cluster
/// Secret its `secret-type` label, unless YAML escapes hide the letters.
pub(crate) fn may_declare(bytes: &[u8]) -> bool {
    use memchr::memmem::Finder;
    static FINDERS: std::sync::OnceLock<(
        Finder<'static>,
        Vec<Finder<'static>>,
        [Finder<'static>; 3],
    )> = std::sync::OnceLock::new();
    let (argo, declares, others) = FINDERS.get_or_init(|| {
        let declares = [
            "Application",
            "AppProject",
            "ArgoCD",
            "secret-type",
            "\\x",
            "\\u",
            "\\U",
        ]
        .iter()
        .map(|m| Finder::new(m.as_bytes()).into_owned())
        .collect();
        (
            Finder::new(b"argoproj.io"),
            declares,
            [
                Finder::new(b"CustomResourceDefinition"),
                Finder::new(b"argocd-cm"),
                Finder::new(b"ConfigManagementPlugin"),
            ],
        )
    });
    (argo.find(bytes).is_some() && declares.iter().any(|m| m.find(bytes).is_some()))
        || others.iter().any(|m| m.find(bytes).is_some())
}

const VERSION: u8 = 4;

fn key(id: ObjectId) -> crate::cache::Key {
    record_key("sigs-yaml-parse", &[&id.0])
}

/// The parse of blob `id` kept in `facts`, when its record is whole.
pub(super) fn kept(facts: &Facts, id: ObjectId) -> Option<(Flags, Vec<Doc>)> {
    decode(&facts.record(key(id))?)
}

/// Keeps the parse `docs` of `bytes` (blob `id`) in `facts`, unless it does
/// not come back exactly from its record.
pub(super) fn keep(facts: &Facts, id: ObjectId, flags: Flags, docs: &[Doc]) {
    let Some(bytes) = encode(flags, docs) else {
        return;
    };
    if decode(&bytes).is_some_and(|(f, d)| f == flags && d == docs) {
        facts.put_record(key(id), bytes);
    }
}

fn digest(bytes: &[u8]) -> u64 {
    // A check against damage, not against whoever writes the cache
    // directory (they can compute any digest): XXH3, several times faster
    // than SipHash on the 10,000 records a warm run of a large fleet reads.
    xxhash_rust::xxh3::xxh3_64(bytes)
}

fn encode(flags: Flags, docs: &[Doc]) -> Option<Vec<u8>> {
    let mut out = vec![VERSION, flags.0];
    out.extend_from_slice(&u32::try_from(docs.len()).ok()?.to_le_bytes());
    for d in docs {
        out.extend_from_slice(&u32::try_from(d.index).ok()?.to_le_bytes());
        out.extend_from_slice(&d.line.to_le_bytes());
        put_value(&mut out, d.value.as_ref(), MAX_NESTING)?;
    }
    let sum = digest(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Some(out)
}

fn decode(bytes: &[u8]) -> Option<(Flags, Vec<Doc>)> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if digest(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader(body);
    if r.take(1)? != [VERSION] {
        return None;
    }
    let flags = r.take(1)?[0];
    if flags & !Flags::ALL != 0 {
        return None;
    }
    let n = r.u32()?;
    let mut docs = Vec::with_capacity(n.min(1024) as usize);
    for _ in 0..n {
        let index = r.u32()? as usize;
        let line = r.u32()?;
        // Checked here and decoded when a reader needs the value whole:
        // most Applications of a fleet are only asked a few fields.
        let (value, rest) = LazyValue::encoded(r.0)?;
        r.0 = rest;
        docs.push(Doc {
            value: std::sync::Arc::new(value),
            index,
            line,
        });
    }
    r.0.is_empty().then_some((Flags(flags), docs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::MAX_RECORD_LEN;
    use goyaml::json::encoded::{ARRAY, FLOAT, NEG_INT, NULL, OBJECT, STRING, TRUE, UINT};
    use goyaml::{load_all_as, Dialect, Limits};

    fn parse(text: &str) -> Vec<Doc> {
        load_all_as(text, Dialect::SigsYaml, &Limits::default()).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_kept_parse_comes_back_whole_and_a_damaged_one_is_refused() {
        let text = "a: 1.0\nb: -0.0\nc: 18446744073709551615\nd: -9\ne: \"\\u00e9\"\nf: [1e300, null, true]\n---\n---\nkind: X\n";
        let docs = parse(text);
        let flags = Flags::of(text.as_bytes());
        let bytes = encode(flags, &docs).unwrap_or_default();
        assert_eq!(decode(&bytes), Some((flags, docs.clone())));
        // Any one byte changed, anywhere: refused.
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            assert_eq!(decode(&bad), None, "byte {at}");
        }
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let facts = Facts::open(dir.path());
        let id = ObjectId([3; 20]);
        keep(&facts, id, flags, &docs);
        assert_eq!(kept(&facts, id), Some((flags, docs)));
        // A record damaged in the store is not used.
        let mut bad = bytes;
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        facts.put_record(key(id), bad);
        assert_eq!(kept(&facts, id), None);
    }

    /// A record whose digest is right but whose values `put_value` never
    /// writes (the digest guards against damage, not against a writer
    /// of the cache directory) is refused without a panic or an
    /// allocation it names.
    #[test]
    fn a_record_with_a_right_digest_and_a_wrong_shape_is_refused() {
        let record = |value: &[u8]| {
            let mut out = vec![VERSION, 0];
            out.extend_from_slice(&1u32.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            out.extend_from_slice(value);
            let sum = digest(&out);
            out.extend_from_slice(&sum.to_le_bytes());
            out
        };
        assert!(decode(&record(&[NULL])).is_some());
        // `n` arrays, each holding the next.
        let nested = |n: usize| -> Vec<u8> {
            (0..n)
                .flat_map(|i| [&[ARRAY][..], &u32::from(i + 1 < n).to_le_bytes()].concat())
                .collect()
        };
        assert!(decode(&record(&nested(MAX_NESTING))).is_some());
        let obj = |n: u32, rest: &[u8]| [&[OBJECT][..], &n.to_le_bytes(), rest].concat();
        let key = |k: &str, v: &[u8]| {
            [
                &u32::try_from(k.len()).unwrap_or(u32::MAX).to_le_bytes()[..],
                k.as_bytes(),
                v,
            ]
            .concat()
        };
        let shapes: Vec<Vec<u8>> = vec![
            vec![9],                                                    // no such tag
            [&[NEG_INT][..], &5i64.to_le_bytes()].concat(),             // not negative
            [&[FLOAT][..], &f64::NAN.to_le_bytes()].concat(),           // not a JSON number
            [&[STRING][..], &2u32.to_le_bytes(), b"\xff\xfe"].concat(), // not UTF-8
            [&[ARRAY][..], &u32::MAX.to_le_bytes()].concat(),           // more items than bytes
            obj(2, &[key("a", &[NULL]), key("a", &[TRUE])].concat()),   // a key twice
            obj(2, &[key("b", &[NULL]), key("a", &[TRUE])].concat()),   // keys out of order
            nested(MAX_NESTING + 1),                                    // nested too deep
            vec![UINT, 1, 2],                                           // cut short
            // Every level claiming more items than a record can hold, over
            // a record's worth of bytes (the room made for them is bounded by
            // `PREALLOCATED`, which this refusal does not observe).
            (0..MAX_NESTING)
                .flat_map(|_| [&[ARRAY][..], &u32::MAX.to_le_bytes()].concat())
                .chain(std::iter::repeat_n(0xff, MAX_RECORD_LEN))
                .collect(),
        ];
        assert!(decode(&record(&obj(
            2,
            &[key("a", &[NULL]), key("b", &[TRUE])].concat()
        )))
        .is_some());
        for (i, shape) in shapes.iter().enumerate() {
            assert_eq!(decode(&record(shape)), None, "shape {i}");
        }
        // And a parse nested deeper than a record holds is not kept.
        let deep = (0..=MAX_NESTING).fold(serde_json::Value::Null, |v, _| {
            serde_json::Value::Array(vec![v])
        });
        let doc = Doc {
            value: std::sync::Arc::new(deep.into()),
            index: 0,
            line: 1,
        };
        assert_eq!(encode(Flags::default(), &[doc]), None);
    }
}

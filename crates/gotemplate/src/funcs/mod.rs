//! The functions a template may call: Go's builtins, the Sprig v3 functions
//! this engine implements, and Argo CD's and Helm's extras. Argument checks
//! mirror Go's reflection: a `string` parameter given a number or a missing
//! value fails (see [`super::args`]).
//!
//! This file is the dispatch: which names each function set (Argo CD's
//! ApplicationSet, Helm) defines, which it refuses, and the tables
//! [`FUNCS`] and [`HELM_FUNCS`] from a name to its implementation. The
//! implementations live by what they work on:
//! - [`builtins`]: text/template's own functions (`eq`, `index`, `printf`,
//!   `html`...);
//! - [`strings`]: Sprig's string functions, case and wrapping, and Argo
//!   CD's `normalize`/`slugify`;
//! - [`math`]: integers, floats, Sprig's exact decimals, conversions and
//!   number ranges;
//! - [`collections`]: lists, dicts, defaults and type tests over any value;
//! - [`codecs`]: hashes, base32/64, JSON and YAML;
//! - [`regexp`]: the regular-expression functions and their bounds;
//! - [`paths`]: Go's `path` functions;
//! - [`helm`]: functions only Helm defines, or defines its own way.
//!
//! A new function goes in the file of its kind and gets a row in a table
//! here.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

mod builtins;
mod codecs;
mod collections;
mod helm;
mod math;
mod paths;
mod regexp;
pub(crate) mod semver;
mod strings;

use super::args::R;
use super::value::V;
use super::FuncSet;

pub(super) use helm::to_toml;
pub use paths::{path_base, path_dir};
pub use regexp::{MAX_REGEX_PATTERN, REGEX_DFA_LIMIT, REGEX_SIZE_LIMIT};
pub use strings::sanitize_name;

/// Functions Argo CD offers that this engine does not evaluate.
const NOT_IMPLEMENTED: &[&str] = &[
    "html",
    "js",
    "urlquery",
    "call",
    "ago",
    "date",
    "date_in_zone",
    "date_modify",
    "dateInZone",
    "dateModify",
    "duration",
    "durationRound",
    "htmlDate",
    "htmlDateInZone",
    "must_date_modify",
    "mustDateModify",
    "mustToDate",
    "now",
    "toDate",
    "unixEpoch",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randSeededNumeric",
    "swapcase",
    "shuffle",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "sha1sum",
    "adler32sum",
    "seq",
    "toDecimal",
    "randInt",
    "add1f",
    "addf",
    "subf",
    "divf",
    "mulf",
    "maxf",
    "minf",
    "round",
    "typeIsLike",
    "b32enc",
    "b32dec",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "randBytes",
    "uuidv4",
    "semver",
    "semverCompare",
];

/// Functions Helm offers that this engine does not evaluate (beyond
/// [`NOT_IMPLEMENTED`]).
const HELM_NOT_IMPLEMENTED: &[&str] = &["fromToml", "toYamlPretty"];

/// Argo CD's additions, which Helm does not have.
const ARGO_ONLY: &[&str] = &["normalize", "slugify"];

/// Checks a function name at parse time, as Go does.
pub(super) fn check_name(name: &str, set: FuncSet) -> Result<(), String> {
    if lookup(name, set).is_some()
        || (set == FuncSet::Helm
            && (super::generators::NAMES.contains(&name) || not_implemented(name, set)))
    {
        // In a chart, a function not implemented is refused where it runs
        // ([`call`]): charts name many in templates that never run with
        // their values, and Helm parses every template of the chart.
        Ok(())
    } else if not_implemented(name, set) {
        Err(refusal(name))
    } else {
        // Includes `env`, `expandenv` and `getHostByName`, which Argo CD removes.
        Err(format!("function {name:?} not defined"))
    }
}

/// Functions only Helm 4 defines (`pkg/engine/funcs.go` `funcMap` at
/// v4.2.1; helm v3.17.1 and v3.18.0 answer `function "mustToYaml" not
/// defined`, verified with the binaries).
const HELM4_ONLY: &[&str] = &["mustToYaml", "mustToToml"];

/// [`check_name`] for a Helm set of the release `gen`.
pub(super) fn check_name_gen(name: &str, set: FuncSet, gen: super::HelmGen) -> Result<(), String> {
    if set == FuncSet::Helm && gen < super::HelmGen::Helm4 && HELM4_ONLY.contains(&name) {
        return Err(format!("function {name:?} not defined"));
    }
    check_name(name, set)
}

/// Whether `name` is a function of `set` this engine does not evaluate.
fn not_implemented(name: &str, set: FuncSet) -> bool {
    NOT_IMPLEMENTED.contains(&name)
        || (set == FuncSet::Helm && HELM_NOT_IMPLEMENTED.contains(&name))
}

fn refusal(name: &str) -> String {
    format!("template function `{name}` is not supported by gitops-lint, so this template cannot be evaluated offline")
}

/// Sprig's list functions, which take any slice (`reflect` kind `Slice`).
const SLICE_READERS: &[&str] = &[
    "has",
    "mustHas",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "join",
    "sortAlpha",
    "reverse",
    "mustReverse",
    "compact",
    "mustCompact",
    "slice",
    "mustSlice",
    "concat",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "chunk",
    "mustChunk",
];

/// Calls `name`. `room` is what is left of the execution's value budget: a
/// function whose result can outgrow its arguments checks the result's size
/// against it before building the result (results no larger than a small
/// multiple of their arguments are charged by the caller afterwards).
///
/// Typed parameters reject a missing value ("invalid value; expected
/// string"); untyped ones see it as nil, which `iface` applies to values
/// a function stores or returns.
pub(super) fn call(name: &str, mut args: Vec<V>, room: usize, set: FuncSet) -> R {
    if SLICE_READERS.contains(&name) {
        // Sprig reads any slice by reflection (a `chartutil.VersionSet`).
        for a in &mut args {
            if let V::Host(h) = a {
                if h.0.kind() == "slice" {
                    *a = h.0.value();
                }
            }
        }
    }
    match lookup(name, set) {
        Some(f) => f(name, &args, room),
        None if not_implemented(name, set) => Err(refusal(name)),
        None => Err(format!("function {name:?} not defined")),
    }
}

/// `and` and `or` evaluate their arguments lazily, so the executor runs them
/// (`State::call`); reaching this would be a bug in the executor.
fn f_lazy(name: &str, _: &[V], _: usize) -> R {
    Err(format!("{name} is evaluated by the executor"))
}

/// The implementation registered under `name` in `set`.
fn lookup(name: &str, set: FuncSet) -> Option<Func> {
    let find = |table: &[(&str, Func)]| table.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    match set {
        FuncSet::ApplicationSet => find(FUNCS),
        FuncSet::Helm if ARGO_ONLY.contains(&name) => None,
        FuncSet::Helm => find(HELM_FUNCS).or_else(|| find(FUNCS)),
    }
}

/// Helm's own functions (`pkg/engine/funcs.go` `funcMap` `extra`,
/// `engine.go` `initFunMap`), which take precedence over [`FUNCS`] in the
/// Helm set. `include` and `tpl` run in the executor (`set.rs`).
const HELM_FUNCS: &[(&str, Func)] = &[
    ("include", f_lazy),
    ("tpl", f_lazy),
    ("required", helm::f_required),
    ("fail", helm::f_helm_fail),
    ("lookup", helm::f_lookup),
    ("getHostByName", helm::f_get_host_by_name),
    ("mustToYaml", codecs::f_to_yaml),
    ("toToml", helm::f_to_toml),
    ("mustToToml", helm::f_to_toml),
    ("fromYaml", helm::f_helm_from_yaml),
    ("fromYamlArray", helm::f_helm_from_yaml),
    ("fromJson", helm::f_helm_from_json),
    ("fromJsonArray", helm::f_helm_from_json),
    // Sprig functions the ApplicationSet set does not evaluate.
    ("semverCompare", helm::f_semver_compare),
    ("semver", helm::f_semver),
    ("addf", math::f_decimal),
    ("add1f", math::f_decimal),
    ("subf", math::f_decimal),
    ("mulf", math::f_decimal),
    ("divf", math::f_decimal),
    ("maxf", math::f_maxf),
    ("minf", math::f_maxf),
    ("round", math::f_round),
    ("sha1sum", codecs::f_sha1sum),
    ("sha512sum", codecs::f_sha512sum),
    ("adler32sum", codecs::f_adler32sum),
    ("b32enc", codecs::f_b32enc),
    ("b32dec", codecs::f_b32dec),
    ("swapcase", strings::f_swapcase),
    ("camelcase", strings::f_camelcase),
    ("snakecase", strings::f_snakecase),
    ("kebabcase", strings::f_snakecase),
    ("wrap", strings::f_wrap),
    ("wrapWith", strings::f_wrap),
    ("toJson", helm::f_helm_to_json),
    ("mustToJson", helm::f_helm_to_json),
    ("mergeOverwrite", helm::f_helm_merge_overwrite),
    ("mustMergeOverwrite", helm::f_helm_merge_overwrite),
    ("seq", math::f_seq),
    // Go's escapers, which Argo CD's set leaves unsupported here.
    ("html", builtins::f_escape),
    ("js", builtins::f_escape),
    ("urlquery", builtins::f_escape),
];

/// A function the engine evaluates: called with the name it was called by
/// (one implementation may serve several names), the arguments, and the
/// bytes left to the execution's value budget (see [`call`]).
type Func = fn(&str, &[V], usize) -> R;

/// Every function this engine evaluates, by name: the single source of
/// [`check_name`] and [`call`]. `and` and `or` are evaluated lazily by the
/// executor itself and appear here so that parsing accepts them.
const FUNCS: &[(&str, Func)] = &[
    // Go builtins (`and` and `or` short-circuit in the executor)
    ("and", f_lazy),
    ("or", f_lazy),
    ("not", builtins::f_not),
    ("len", builtins::f_len),
    ("index", builtins::f_index),
    ("print", builtins::f_print),
    ("println", builtins::f_println),
    ("printf", builtins::f_printf),
    ("eq", builtins::f_eq),
    ("ne", builtins::f_ne),
    ("lt", builtins::f_lt),
    ("le", builtins::f_le),
    ("gt", builtins::f_gt),
    ("ge", builtins::f_ge),
    ("hello", strings::f_hello),
    ("abbrev", strings::f_abbrev),
    ("abbrevboth", strings::f_abbrevboth),
    ("trunc", strings::f_trunc),
    ("trim", strings::f_trim),
    ("upper", strings::f_upper),
    ("lower", strings::f_lower),
    ("title", strings::f_title),
    ("untitle", strings::f_untitle),
    ("initials", strings::f_initials),
    ("nospace", strings::f_nospace),
    ("substr", strings::f_substr),
    ("repeat", strings::f_repeat),
    ("trimall", strings::f_trimall),
    ("trimAll", strings::f_trimall),
    ("trimSuffix", strings::f_trim_suffix),
    ("trimPrefix", strings::f_trim_prefix),
    ("contains", strings::f_contains),
    ("hasPrefix", strings::f_has_prefix),
    ("hasSuffix", strings::f_has_suffix),
    ("quote", strings::f_quote),
    ("squote", strings::f_squote),
    ("cat", strings::f_cat),
    ("indent", strings::f_indent),
    ("nindent", strings::f_indent),
    ("replace", strings::f_replace),
    ("plural", strings::f_plural),
    ("sha256sum", codecs::f_sha256sum),
    ("derivePassword", super::crypto::f_derive_password),
    ("urlParse", super::url::f_url_parse),
    ("urlJoin", super::url::f_url_join),
    ("buildCustomCert", super::crypto::f_build_custom_cert),
    ("toString", strings::f_to_string),
    ("atoi", math::f_atoi),
    ("int64", math::f_int64),
    ("int", math::f_int64),
    ("float64", math::f_float64),
    ("split", strings::f_split),
    ("splitn", strings::f_split),
    ("splitList", strings::f_split_list),
    ("toStrings", strings::f_to_strings),
    ("until", math::f_until),
    ("untilStep", math::f_until_step),
    ("add1", math::f_add1),
    ("add", math::f_add),
    ("sub", math::f_sub),
    ("mul", math::f_mul),
    ("div", math::f_div),
    ("mod", math::f_div),
    ("max", math::f_max),
    ("biggest", math::f_max),
    ("min", math::f_max),
    ("floor", math::f_floor),
    ("ceil", math::f_floor),
    ("join", strings::f_join),
    ("sortAlpha", strings::f_sort_alpha),
    ("default", collections::f_default),
    ("empty", collections::f_empty),
    ("coalesce", collections::f_coalesce),
    ("all", collections::f_all),
    ("any", collections::f_any),
    ("compact", collections::f_compact),
    ("mustCompact", collections::f_compact),
    ("fromJson", codecs::f_from_json),
    ("mustFromJson", codecs::f_from_json),
    ("toJson", codecs::f_to_json),
    ("mustToJson", codecs::f_to_json),
    ("toRawJson", codecs::f_to_json),
    ("mustToRawJson", codecs::f_to_json),
    ("toPrettyJson", codecs::f_to_pretty_json),
    ("mustToPrettyJson", codecs::f_to_pretty_json),
    ("ternary", collections::f_ternary),
    ("deepCopy", collections::f_deep_copy),
    ("mustDeepCopy", collections::f_deep_copy),
    ("typeOf", collections::f_type_of),
    ("typeIs", collections::f_type_is),
    ("kindOf", collections::f_kind_of),
    ("kindIs", collections::f_kind_is),
    ("deepEqual", collections::f_deep_equal),
    ("base", paths::f_base),
    ("osBase", paths::f_base),
    ("dir", paths::f_dir),
    ("osDir", paths::f_dir),
    ("clean", paths::f_clean),
    ("osClean", paths::f_clean),
    ("ext", paths::f_ext),
    ("osExt", paths::f_ext),
    ("isAbs", paths::f_is_abs),
    ("osIsAbs", paths::f_is_abs),
    ("b64enc", codecs::f_b64enc),
    ("b64dec", codecs::f_b64dec),
    ("tuple", collections::f_tuple),
    ("list", collections::f_tuple),
    ("dict", collections::f_dict),
    ("get", collections::f_get),
    ("set", collections::f_set),
    ("unset", collections::f_unset),
    ("hasKey", collections::f_has_key),
    ("pluck", collections::f_pluck),
    ("keys", collections::f_keys),
    ("values", collections::f_values),
    ("pick", collections::f_pick),
    ("omit", collections::f_pick),
    ("merge", collections::f_merge),
    ("mustMerge", collections::f_merge),
    ("mergeOverwrite", collections::f_merge),
    ("mustMergeOverwrite", collections::f_merge),
    ("append", collections::f_append),
    ("push", collections::f_append),
    ("mustAppend", collections::f_append),
    ("mustPush", collections::f_append),
    ("prepend", collections::f_prepend),
    ("mustPrepend", collections::f_prepend),
    ("first", collections::f_first),
    ("mustFirst", collections::f_first),
    ("last", collections::f_last),
    ("mustLast", collections::f_last),
    ("rest", collections::f_rest),
    ("mustRest", collections::f_rest),
    ("initial", collections::f_rest),
    ("mustInitial", collections::f_rest),
    ("reverse", collections::f_reverse),
    ("mustReverse", collections::f_reverse),
    ("uniq", collections::f_uniq),
    ("mustUniq", collections::f_uniq),
    ("without", collections::f_without),
    ("mustWithout", collections::f_without),
    ("has", collections::f_has),
    ("mustHas", collections::f_has),
    ("slice", collections::f_slice),
    ("mustSlice", collections::f_slice),
    ("concat", collections::f_concat),
    ("dig", collections::f_dig),
    ("chunk", collections::f_chunk),
    ("mustChunk", collections::f_chunk),
    ("fail", collections::f_fail),
    ("regexMatch", regexp::f_regex_match),
    ("mustRegexMatch", regexp::f_regex_match),
    ("regexFind", regexp::f_regex_find),
    ("mustRegexFind", regexp::f_regex_find),
    ("regexFindAll", regexp::f_regex_find_all),
    ("mustRegexFindAll", regexp::f_regex_find_all),
    ("regexReplaceAll", regexp::f_regex_replace_all),
    ("mustRegexReplaceAll", regexp::f_regex_replace_all),
    (
        "regexReplaceAllLiteral",
        regexp::f_regex_replace_all_literal,
    ),
    (
        "mustRegexReplaceAllLiteral",
        regexp::f_regex_replace_all_literal,
    ),
    ("regexSplit", regexp::f_regex_split),
    ("mustRegexSplit", regexp::f_regex_split),
    ("regexQuoteMeta", regexp::f_regex_quote_meta),
    ("normalize", strings::f_normalize),
    ("slugify", strings::f_slugify),
    ("toYaml", codecs::f_to_yaml),
    ("fromYaml", codecs::f_from_yaml),
    ("fromYamlArray", codecs::f_from_yaml),
];

//! Sprig's functions whose result is random or the clock's, as Helm v3.17.1
//! offers them (Sprig v3.3.0: `strings.go` `randAlphaNumeric`…,
//! `functions.go` `now`, `randInt`, `shuffle`, `date.go`, `crypto.go`).
//! Helm gives a new result at every render; Argo CD re-renders at every
//! refresh, so whatever a chart writes from them is never what the cluster
//! holds.
//!
//! Here each result is drawn from a seeded stream (one per template, so a
//! change to one template does not move another's values) and a fixed
//! clock, so two renders of one revision agree. A second [`Variant`] draws
//! a result that differs wherever the function's result can differ (every
//! character chosen, every byte, the clock's every field): rendering twice
//! and comparing shows which output fields are generated, which the plan
//! then leaves out of its comparisons.
//!
//! What the functions print has Sprig's shape: the length and alphabet of
//! `randAlphaNum`, a version-4 UUID, bcrypt's `$2a$10$` and 60 characters,
//! PEM blocks of the type and about the size Sprig writes. The PEM blocks
//! hold no key or certificate anyone could parse: their bytes start with
//! `gitops-lint: generated offline` and are random after it.

use crate::go::time::{DAYS, MONTHS};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::Digest as _;

use super::args::{arity, fits, int, s, type_err, R};
use super::value::{Host, HostObject, Json, V};
use crate::go::time;

/// The functions this module evaluates, in the Helm function set only
/// (ApplicationSets keep refusing them, as gitops-lint cannot know what
/// Argo CD's controller would draw).
pub(super) const NAMES: &[&str] = &[
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randInt",
    "randBytes",
    "shuffle",
    "uuidv4",
    "now",
    "date",
    "dateInZone",
    "date_in_zone",
    "htmlDate",
    "htmlDateInZone",
    "unixEpoch",
    "toDate",
    "mustToDate",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "must_date_modify",
    "duration",
    "durationRound",
    "ago",
    "genCA",
    "genSelfSignedCert",
    "genSignedCert",
    "genPrivateKey",
    "htpasswd",
    "bcrypt",
];

/// Which of two renders a generator serves: the first is the one reported;
/// the second differs from it in every generated value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// The render reported.
    #[default]
    First,
    /// The render compared with the first to find generated fields.
    Second,
}

impl Variant {
    /// What every choice is shifted by.
    fn shift(self) -> u64 {
        match self {
            Variant::First => 0,
            Variant::Second => 1,
        }
    }

    /// The fixed clock: two instants that differ in every field Go's
    /// layouts print (year, month, day, weekday, hour, AM/PM, minute,
    /// second, every digit of the fraction).
    fn clock(self) -> Instant {
        match self {
            // 2031-03-14T15:09:26.535897932Z, a Friday
            Variant::First => Instant {
                secs: 1_931_267_366,
                nanos: 535_897_932,
            },
            // 2042-11-27T04:53:48.271828182Z, a Thursday
            Variant::Second => Instant {
                secs: 2_300_676_828,
                nanos: 271_828_182,
            },
        }
    }
}

/// The random stream and clock of one template's execution; clones share
/// them.
#[derive(Debug, Clone)]
pub struct Generator(Arc<Mutex<Stream>>);

#[derive(Debug)]
struct Stream {
    rng: ChaCha8Rng,
    variant: Variant,
    used: bool,
}

impl Generator {
    /// The stream named `stream` (a template's name) of `variant`.
    #[must_use]
    pub fn new(stream: &str, variant: Variant) -> Generator {
        let mut seed = sha2::Sha256::new();
        seed.update(b"gitops-lint generated values\0");
        seed.update(stream.as_bytes());
        Generator(Arc::new(Mutex::new(Stream {
            rng: ChaCha8Rng::from_seed(seed.finalize().into()),
            variant,
            used: false,
        })))
    }

    /// Whether a random value or the clock has been drawn.
    #[must_use]
    pub fn used(&self) -> bool {
        self.lock().used
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stream> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Evaluates `name` if it is one of [`NAMES`].
    pub(super) fn call(&self, name: &str, a: &[V], room: usize) -> Option<R> {
        let mut st = self.lock();
        let st = &mut *st;
        Some(match name {
            "randAlphaNum" => st.chars(a, room, ALNUM),
            "randAlpha" => st.chars(a, room, ALPHA),
            "randNumeric" => st.chars(a, room, DIGITS),
            "randAscii" => st.chars(a, room, ASCII),
            "randInt" => st.rand_int(a),
            "randBytes" => st.rand_bytes(a, room),
            "shuffle" => st.shuffle(a),
            "uuidv4" => st.uuidv4(a),
            "now" => arity(a, 0).map(|()| {
                let t = st.now();
                V::Host(Host(Arc::new(Time {
                    t,
                    mono: Some(NOW_MONO),
                })))
            }),
            "date" => arity(a, 2).and_then(|()| st.date_in_zone(s(&a[0])?, &a[1], "Local")),
            "dateInZone" | "date_in_zone" => {
                arity(a, 3).and_then(|()| st.date_in_zone(s(&a[0])?, &a[1], s(&a[2])?))
            }
            "htmlDate" => arity(a, 1).and_then(|()| st.date_in_zone("2006-01-02", &a[0], "Local")),
            "htmlDateInZone" => {
                arity(a, 2).and_then(|()| st.date_in_zone("2006-01-02", &a[0], s(&a[1])?))
            }
            "unixEpoch" => arity(a, 1)
                .and_then(|()| time_arg(&a[0]))
                .map(|t| V::Str(t.t.secs.to_string())),
            "toDate" => arity(a, 2).and_then(|()| to_date(s(&a[0])?, s(&a[1])?, false)),
            "mustToDate" => arity(a, 2).and_then(|()| to_date(s(&a[0])?, s(&a[1])?, true)),
            "dateModify" | "date_modify" => {
                arity(a, 2).and_then(|()| date_modify(s(&a[0])?, &a[1], false))
            }
            "mustDateModify" | "must_date_modify" => {
                arity(a, 2).and_then(|()| date_modify(s(&a[0])?, &a[1], true))
            }
            "duration" => arity(a, 1).map(|()| duration(&a[0])),
            "durationRound" => arity(a, 1).map(|()| st.duration_round(&a[0])),
            "ago" => arity(a, 1).and_then(|()| st.ago(&a[0])),
            "genCA" => st.gen_ca(a),
            "genSelfSignedCert" => st.gen_self_signed(a),
            "genSignedCert" => st.gen_signed(a),
            "genPrivateKey" => st.gen_private_key(a),
            "htpasswd" => st.htpasswd(a),
            "bcrypt" => arity(a, 1).and_then(|()| st.bcrypt(s(&a[0])?)),
            _ => return None,
        })
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &[u8] = b"0123456789";
/// `goutils.CryptoRandomAscii`: code points 32 to 126.
const ASCII: &[u8] = b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
/// bcrypt's base64 alphabet.
const BCRYPT: &[u8] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/// What every generated PEM block's bytes start with.
const PEM_MARK: &[u8] = b"gitops-lint: generated offline\0";

impl Stream {
    /// A choice among `n` (> 0), shifted in the second variant.
    fn pick(&mut self, n: usize) -> usize {
        self.used = true;
        let n64 = n as u64;
        let r = self.rng.next_u64() % n64;
        usize::try_from((r + self.variant.shift()) % n64).unwrap_or(0)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        self.used = true;
        let mut b = vec![0; n];
        self.rng.fill_bytes(&mut b);
        if self.variant == Variant::Second {
            for x in &mut b {
                *x ^= 1;
            }
        }
        b
    }

    fn now(&mut self) -> Instant {
        self.used = true;
        self.variant.clock()
    }

    fn text(&mut self, n: usize, alphabet: &[u8]) -> String {
        (0..n)
            .map(|_| char::from(alphabet[self.pick(alphabet.len())]))
            .collect()
    }

    /// `randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`
    /// (`goutils.CryptoRandom`): a negative count is an error Sprig drops,
    /// leaving "".
    fn chars(&mut self, a: &[V], room: usize, alphabet: &[u8]) -> R {
        arity(a, 1)?;
        let n = usize::try_from(int(&a[0])?).unwrap_or(0);
        fits(n, room)?;
        Ok(V::Str(self.text(n, alphabet)))
    }

    /// `func(min, max int) int { return rand.Intn(max-min) + min }`; Intn
    /// panics unless its argument is positive, which text/template reports.
    fn rand_int(&mut self, a: &[V]) -> R {
        arity(a, 2)?;
        let (min, max) = (int(&a[0])?, int(&a[1])?);
        let span = max.checked_sub(min).filter(|d| *d > 0);
        let Some(span) = span.and_then(|d| usize::try_from(d).ok()) else {
            return Err("invalid argument to Intn".into());
        };
        let k = i64::try_from(self.pick(span)).unwrap_or(0);
        Ok(V::Int(min + k))
    }

    /// `randBytes`: base64 of `count` random bytes.
    fn rand_bytes(&mut self, a: &[V], room: usize) -> R {
        arity(a, 1)?;
        let Ok(n) = usize::try_from(int(&a[0])?) else {
            return Err("runtime error: makeslice: len out of range".into());
        };
        fits(n.saturating_mul(2), room)?;
        let b = self.bytes(n);
        Ok(V::Str(base64::engine::general_purpose::STANDARD.encode(b)))
    }

    /// `xstrings.Shuffle`: the runes in a random order.
    fn shuffle(&mut self, a: &[V]) -> R {
        arity(a, 1)?;
        let mut runes: Vec<char> = s(&a[0])?.chars().collect();
        self.used = true;
        for i in (1..runes.len()).rev() {
            let j = usize::try_from(self.rng.next_u64() % (i as u64 + 1)).unwrap_or(0);
            runes.swap(i, j);
        }
        // Rotated, the order differs unless every rune is the same.
        if self.variant == Variant::Second && !runes.is_empty() {
            runes.rotate_left(1);
        }
        Ok(V::Str(runes.into_iter().collect()))
    }

    /// `uuid.New().String()`: version 4, RFC 4122 variant.
    fn uuidv4(&mut self, a: &[V]) -> R {
        arity(a, 0)?;
        let mut b = self.bytes(16);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        Ok(V::Str(format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )))
    }

    /// Sprig's `dateInZone`: a `time.Time` or an `int`/`int64`/`int32` of
    /// Unix seconds, anything else (a float from values included) the
    /// current time; a zone `LoadLocation` cannot load falls back to UTC.
    fn date_in_zone(&mut self, layout: &str, date: &V, zone: &str) -> R {
        let t = match date {
            V::Host(h) if h.0.type_name() == "time.Time" => time_arg(date)?.t,
            V::Int(secs) | V::Int64(secs) => Instant {
                secs: *secs,
                nanos: 0,
            },
            _ => self.now(),
        };
        // "Local" is the repo-server's zone: its image sets none, so UTC.
        if !matches!(zone, "UTC" | "" | "Local") {
            return Err(format!(
                "the time zone {zone:?} is not supported by gitops-lint (UTC is), so this template cannot be evaluated offline"
            ));
        }
        Ok(V::Str(format_time(layout, t)?))
    }

    fn certificate_args(a: &[V], n: usize) -> Result<(String, usize), String> {
        arity(a, n)?;
        let cn = s(&a[0])?.to_string();
        let mut extra = cn.len();
        if n >= 4 {
            for ip in slice_arg(&a[1])? {
                let V::Str(text) = ip else {
                    return Err(format!(
                        "error parsing ip: {} is not a string",
                        ip.go_string()
                    ));
                };
                match text.parse::<std::net::IpAddr>() {
                    Ok(std::net::IpAddr::V4(_)) => extra += 6,
                    Ok(std::net::IpAddr::V6(_)) => extra += 18,
                    Err(_) => return Err(format!("error parsing ip: {text}")),
                }
            }
            for dns in slice_arg(&a[2])? {
                let V::Str(text) = dns else {
                    return Err(format!(
                        "error processing alternate dns name: {} is not a string",
                        dns.go_string()
                    ));
                };
                extra += text.len() + 2;
            }
        }
        int(&a[n - 1 - usize::from(n == 5)])?;
        Ok((cn, extra))
    }

    /// A certificate and its 2048-bit RSA key, as PEM.
    fn certificate(&mut self, extra: usize) -> V {
        let cert = pem(self, "CERTIFICATE", 780 + extra);
        let key = pem(self, "RSA PRIVATE KEY", 1192);
        V::Host(Host(Arc::new(Certificate { cert, key })))
    }

    /// `genCA cn daysValid`.
    fn gen_ca(&mut self, a: &[V]) -> R {
        let (_, extra) = Self::certificate_args(a, 2)?;
        Ok(self.certificate(extra))
    }

    /// `genSelfSignedCert cn ips alternateDNS daysValid`.
    fn gen_self_signed(&mut self, a: &[V]) -> R {
        let (_, extra) = Self::certificate_args(a, 4)?;
        Ok(self.certificate(extra))
    }

    /// `genSignedCert cn ips alternateDNS daysValid ca`: the CA must be a
    /// `certificate` (Sprig parses its PEM, so it is one generated here).
    fn gen_signed(&mut self, a: &[V]) -> R {
        let (_, extra) = Self::certificate_args(a, 5)?;
        match &a[4] {
            V::Host(h) if h.0.type_name() == "sprig.certificate" => Ok(self.certificate(extra)),
            other => Err(type_err("sprig.certificate", other)),
        }
    }

    /// `genPrivateKey type`: `rsa` (4096 bits), `dsa`, `ecdsa` (P-256),
    /// `ed25519` (PKCS #8); any other type's message.
    fn gen_private_key(&mut self, a: &[V]) -> R {
        arity(a, 1)?;
        let typ = s(&a[0])?;
        let (block, len) = match typ {
            "" | "rsa" => ("RSA PRIVATE KEY", 2349),
            "dsa" => ("DSA PRIVATE KEY", 863),
            "ecdsa" => ("EC PRIVATE KEY", 121),
            "ed25519" => ("PRIVATE KEY", 48),
            other => return Ok(V::Str(format!("Unknown type {other}"))),
        };
        Ok(V::Str(pem(self, block, len)))
    }

    /// `htpasswd username password`: `username:` and a bcrypt hash.
    fn htpasswd(&mut self, a: &[V]) -> R {
        arity(a, 2)?;
        let (user, password) = (s(&a[0])?, s(&a[1])?);
        if user.contains(':') {
            return Ok(V::Str(format!("invalid username: {user}")));
        }
        let V::Str(hash) = self.bcrypt(password)? else {
            unreachable!("bcrypt gives a string")
        };
        Ok(V::Str(format!("{user}:{hash}")))
    }

    /// `bcrypt.GenerateFromPassword(input, DefaultCost)`: `$2a$10$`, a
    /// 22-character salt and a 31-character hash.
    fn bcrypt(&mut self, input: &str) -> R {
        if input.len() > 72 {
            // x/crypto's check of the password length has moved between
            // versions; what helm's build does is not reproduced.
            return Err("bcrypt of more than 72 bytes is not supported by gitops-lint, so this template cannot be evaluated offline".into());
        }
        Ok(V::Str(format!("$2a$10${}", self.text(53, BCRYPT))))
    }
}

/// A PEM block of `len` bytes that start with [`PEM_MARK`] (64 columns,
/// as `encoding/pem` writes).
fn pem(st: &mut Stream, block: &str, len: usize) -> String {
    let mut der = PEM_MARK.to_vec();
    der.extend(st.bytes(len.saturating_sub(PEM_MARK.len())));
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {block}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {block}-----\n"));
    out
}

/// A `[]interface{}` parameter: a list, or nil (a missing value is the nil
/// slice, as text/template's `validateType` gives it: `(default nil .x)`).
fn slice_arg(v: &V) -> Result<&[V], String> {
    match v {
        V::List(l) => Ok(l),
        V::Nil | V::Missing => Ok(&[]),
        other => Err(type_err("[]interface {}", other)),
    }
}

/// Sprig's `certificate` of `cert` and `key` (PEM text).
pub(super) fn certificate(cert: String, key: String) -> V {
    V::Host(Host(Arc::new(Certificate { cert, key })))
}

/// Sprig's `certificate` struct.
#[derive(Debug)]
struct Certificate {
    cert: String,
    key: String,
}

impl HostObject for Certificate {
    fn type_name(&self) -> &'static str {
        "sprig.certificate"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "Cert" => Some(V::Str(self.cert.clone())),
            "Key" => Some(V::Str(self.key.clone())),
            _ => None,
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(format!("{{{} {}}}", self.cert, self.key))
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn json(&self) -> Json {
        Json::Object(vec![
            ("Cert".into(), V::Str(self.cert.clone())),
            ("Key".into(), V::Str(self.key.clone())),
        ])
    }
}

/// A UTC instant: seconds since the Unix epoch and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Instant {
    secs: i64,
    nanos: u32,
}

/// Years beyond which gitops-lint does not format a time (Go's `Time`
/// reaches further; no chart prints such dates).
const MAX_ABS_SECS: i64 = 400_000_000_000;

fn time(t: Instant) -> V {
    V::Host(Host(Arc::new(Time { t, mono: None })))
}

/// The monotonic reading `now` gives (Go's `m=+0.000000001`: the clock of
/// a process just started).
const NOW_MONO: i64 = 1;

fn time_arg(v: &V) -> Result<Time, String> {
    match v {
        V::Host(h) => match h.0.as_any().and_then(|a| a.downcast_ref::<Time>()) {
            Some(t) => Ok(Time {
                t: t.t,
                mono: t.mono,
            }),
            None => Err(type_err("time.Time", v)),
        },
        other => Err(type_err("time.Time", other)),
    }
}

/// `time.Time` (UTC, as the repo-server's zone is) and the monotonic
/// reading `now` gives it, in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Time {
    t: Instant,
    mono: Option<i64>,
}

/// Unix seconds of 1885-01-01, from which Go packs a monotonic time's wall
/// seconds in 33 bits (`time.go` `wallToInternal`).
const MONO_WALL_MIN: i64 = -2_682_374_400;

impl Time {
    /// `Time.Add`: the monotonic reading moves too, and is dropped where it
    /// overflows or the wall clock leaves what Go packs with it.
    fn add(self, d: i64) -> Time {
        let mut secs = self.t.secs + d / time::SECOND;
        let mut nanos = i64::from(self.t.nanos) + d % time::SECOND;
        if nanos >= time::SECOND {
            secs += 1;
            nanos -= time::SECOND;
        } else if nanos < 0 {
            secs -= 1;
            nanos += time::SECOND;
        }
        let t = Instant {
            secs,
            nanos: u32::try_from(nanos).unwrap_or(0),
        };
        let packed = (0..1_i64 << 33).contains(&(secs - MONO_WALL_MIN));
        let mono = self.mono.filter(|_| packed).and_then(|m| m.checked_add(d));
        Time { t, mono }
    }

    /// `Time.Sub`: by the monotonic readings where both have one, else by
    /// the wall clocks, saturating.
    fn sub(self, u: Time) -> i64 {
        if let (Some(a), Some(b)) = (self.mono, u.mono) {
            return match a.checked_sub(b) {
                Some(d) => d,
                None if a > b => i64::MAX,
                None => i64::MIN,
            };
        }
        let whole = i128::from(self.t.secs - u.t.secs) * i128::from(time::SECOND)
            + i128::from(i64::from(self.t.nanos) - i64::from(u.t.nanos));
        i64::try_from(whole).unwrap_or(if whole > 0 { i64::MAX } else { i64::MIN })
    }
}

/// `time.ParseInLocation(layout, value, time.Local)` (Sprig's `toDate`,
/// `mustToDate`); `toDate` gives the zero time for what does not parse.
fn to_date(layout: &str, value: &str, must: bool) -> R {
    match time::parse(layout, value) {
        Ok(time::Parsed::Utc(secs, nanos)) => {
            let t = Instant { secs, nanos };
            if t.secs.abs() > MAX_ABS_SECS {
                return Err(far_date());
            }
            Ok(time(t))
        }
        Ok(time::Parsed::OtherZone) => Err(format!(
            "the time zone of {value:?} is not supported by gitops-lint (UTC is), so this template cannot be evaluated offline"
        )),
        Err(e) if must => Err(e),
        // January 1 of year 1, 00:00:00 UTC.
        Err(_) => Ok(time(Instant {
            secs: -62_135_596_800,
            nanos: 0,
        })),
    }
}

/// Sprig's `dateModify`: the time plus a `time.ParseDuration` duration;
/// what does not parse leaves it as it is (`mustDateModify`: Go's error).
fn date_modify(duration: &str, date: &V, must: bool) -> R {
    let t = time_arg(date)?;
    let d = match time::parse_duration(duration) {
        Ok(d) => d,
        Err(e) if must => return Err(e),
        Err(_) => return Ok(V::Host(Host(Arc::new(t)))),
    };
    let moved = t.add(d);
    if moved.t.secs.abs() > MAX_ABS_SECS {
        return Err(far_date());
    }
    Ok(V::Host(Host(Arc::new(moved))))
}

fn far_date() -> String {
    "a date this far from today is not supported by gitops-lint, so this template cannot be evaluated offline".into()
}

/// Sprig's `duration`: a string of seconds (`strconv.ParseInt`, whose
/// range error still gives the bound) or an `int64`, else 0: an `int` (a
/// literal, `len`) is no `int64` in its type switch (date.go@v3.3.0).
fn duration(v: &V) -> V {
    let n: i64 = match v {
        V::Str(text) => parse_int_saturating(text),
        V::Int64(n) => *n,
        _ => 0,
    };
    V::Str(time::duration_string(n.wrapping_mul(time::SECOND)))
}

/// `strconv.ParseInt(s, 10, 64)` as Sprig keeps its value: 0 for a
/// syntax error, the bound for a range error.
fn parse_int_saturating(s: &str) -> i64 {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return 0;
    }
    let mut n: i128 = 0;
    for c in digits.bytes() {
        n = (n * 10 + i128::from(c - b'0')).min(i128::from(u64::MAX));
    }
    if neg {
        i64::try_from(-n).unwrap_or(i64::MIN)
    } else {
        i64::try_from(n).unwrap_or(i64::MAX)
    }
}

/// Sprig's `durationRound` buckets: whole years (365 days), months (30),
/// days, hours, minutes, seconds, each past a strict `>`.
fn round_buckets(d: i64) -> String {
    const H: u64 = 3_600_000_000_000;
    let u = d.unsigned_abs();
    for (unit, suffix) in [
        (H * 24 * 365, "y"),
        (H * 24 * 30, "mo"),
        (H * 24, "d"),
        (H, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ] {
        if u > unit {
            return format!("{}{suffix}", u / unit);
        }
    }
    "0s".into()
}

impl Stream {
    /// The clock as a function reads it after the template's `now`: a
    /// nanosecond later on both clocks, as time has passed.
    fn since(&mut self, t: Time) -> i64 {
        let now = Time {
            t: self.now(),
            mono: Some(NOW_MONO),
        }
        .add(1);
        now.sub(t)
    }

    /// Sprig's `durationRound`: a `time.ParseDuration` string (0 where it
    /// does not parse), an `int64` of nanoseconds, or the time since a
    /// `time.Time`; anything else is 0.
    fn duration_round(&mut self, v: &V) -> V {
        let d = match v {
            V::Str(text) => time::parse_duration(text).unwrap_or(0),
            // An `int64` is nanoseconds; an `int` is no `int64` in its type
            // switch and gives 0 (date.go@v3.3.0).
            V::Int64(n) => *n,
            V::Host(_) => match time_arg(v) {
                Ok(t) => self.since(t),
                Err(_) => 0,
            },
            _ => 0,
        };
        V::Str(round_buckets(d))
    }

    /// Sprig's `dateAgo`: the time since a `time.Time` or Unix seconds
    /// (anything else: now), to the second.
    fn ago(&mut self, v: &V) -> R {
        let t = match v {
            V::Int(secs) | V::Int64(secs) => Time {
                t: Instant {
                    secs: *secs,
                    nanos: 0,
                },
                mono: None,
            },
            V::Host(_) if time_arg(v).is_ok() => time_arg(v)?,
            _ => Time {
                t: self.now(),
                mono: Some(NOW_MONO),
            },
        };
        let d = time::duration_round(self.since(t), time::SECOND);
        Ok(V::Str(time::duration_string(d)))
    }
}

/// `time.Time`'s methods this module does not evaluate.
const TIME_METHODS: &[&str] = &[
    "Add",
    "AddDate",
    "After",
    "AppendFormat",
    "Before",
    "Clock",
    "Compare",
    "Date",
    "Equal",
    "GoString",
    "GobEncode",
    "ISOWeek",
    "In",
    "IsDST",
    "IsZero",
    "Location",
    "MarshalBinary",
    "MarshalJSON",
    "MarshalText",
    "Round",
    "Sub",
    "Truncate",
    "Zone",
    "ZoneBounds",
];

impl HostObject for Time {
    fn type_name(&self) -> &'static str {
        "time.Time"
    }
    fn field(&self, name: &str) -> Option<V> {
        let t = self.t;
        let (y, m, d, yday, wday) = civil(t.secs.div_euclid(86_400));
        let sod = t.secs.rem_euclid(86_400);
        Some(match name {
            "Year" => V::Int(y),
            "Month" => V::Str(MONTHS[usize::try_from(m - 1).unwrap_or(0)].into()),
            "Day" => V::Int(d),
            "YearDay" => V::Int(yday),
            "Weekday" => V::Str(DAYS[usize::try_from(wday).unwrap_or(0)].into()),
            "Hour" => V::Int(sod / 3600),
            "Minute" => V::Int(sod / 60 % 60),
            "Second" => V::Int(sod % 60),
            "Nanosecond" => V::Int(i64::from(t.nanos)),
            // `time.Time`'s `Unix…` methods return `int64`, the others `int`.
            "Unix" => V::Int64(t.secs),
            "UnixMilli" => V::Int64(t.secs * 1000 + i64::from(t.nanos / 1_000_000)),
            "UnixMicro" => V::Int64(t.secs * 1_000_000 + i64::from(t.nanos / 1000)),
            "UnixNano" => V::Int64(
                t.secs
                    .saturating_mul(1_000_000_000)
                    .saturating_add(i64::from(t.nanos)),
            ),
            "UTC" | "Local" => time(t),
            "String" => V::Str(self.printed()),
            _ if TIME_METHODS.contains(&name) => return Some(refused_method(name)),
            _ => return None,
        })
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        match name {
            "Format" => Some(match args {
                [V::Str(layout)] => format_time(layout, self.t).map(V::Str),
                [other] => Err(type_err("string", other)),
                _ => Err(format!(
                    "wrong number of args for Format: want 1 got {}",
                    args.len()
                )),
            }),
            _ if TIME_METHODS.contains(&name) => Some(Err(method_refusal(name))),
            _ => None,
        }
    }
    fn value(&self) -> V {
        V::Str(self.printed())
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn format(&self, _: bool) -> String {
        self.printed()
    }
    /// `Time.String`: the wall clock, then the monotonic reading `now`
    /// carries.
    fn printed(&self) -> String {
        let wall =
            format_time("2006-01-02 15:04:05.999999999 -0700 MST", self.t).unwrap_or_default();
        match self.mono {
            // `m=±s.nnnnnnnnn`
            Some(m) => {
                let (sign, u) = (if m < 0 { '-' } else { '+' }, m.unsigned_abs());
                format!(
                    "{wall} m={sign}{}.{:09}",
                    u / 1_000_000_000,
                    u % 1_000_000_000
                )
            }
            None => wall,
        }
    }
    /// `Time.MarshalJSON`: RFC 3339 with nanoseconds.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn json(&self) -> Json {
        Json::Value(V::Str(
            format_time("2006-01-02T15:04:05.999999999Z07:00", self.t).unwrap_or_default(),
        ))
    }
}

fn method_refusal(name: &str) -> String {
    format!("the method time.Time.{name} is not supported by gitops-lint, so this template cannot be evaluated offline")
}

fn refused_method(name: &str) -> V {
    // A field read cannot fail; the method's value is a refusal printed
    // where it is used, so the render fails rather than print it.
    V::Host(Host(Arc::new(Refused(method_refusal(name)))))
}

/// What a refused method stands for: any use of it fails.
#[derive(Debug)]
struct Refused(String);

impl HostObject for Refused {
    fn type_name(&self) -> &'static str {
        "func"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        Some(Err(self.0.clone()))
    }
    fn value(&self) -> V {
        V::Str(self.0.clone())
    }
    fn as_text(&self) -> Option<Result<String, String>> {
        Some(Err(self.0.clone()))
    }
}

/// Year, month, day, day of the year and weekday (Sunday = 0) of a day
/// counted from 1970-01-01 (the proleptic Gregorian calendar, as Go's).
fn civil(days: i64) -> (i64, i64, i64, i64, i64) {
    const BEFORE: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let yday = BEFORE[usize::try_from(m - 1).unwrap_or(0)] + d + i64::from(leap && m > 2);
    let wday = (days + 4).rem_euclid(7);
    (y, m, d, yday, wday)
}

/// Go's `Time.Format` of a UTC instant (`time/format.go` `nextStdChunk`,
/// `appendFormat`).
fn format_time(layout: &str, t: Instant) -> Result<String, String> {
    if t.secs.abs() > MAX_ABS_SECS {
        return Err("a date this far from today is not supported by gitops-lint, so this template cannot be evaluated offline".into());
    }
    let (year, month, day, yday, wday) = civil(t.secs.div_euclid(86_400));
    let sod = t.secs.rem_euclid(86_400);
    let (hour, min, sec) = (sod / 3600, sod / 60 % 60, sod % 60);
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
    let month_name = MONTHS[usize::try_from(month - 1).unwrap_or(0)];
    let day_name = DAYS[usize::try_from(wday).unwrap_or(0)];
    let b = layout.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let at = |i: usize, p: &str| b[i..].starts_with(p.as_bytes());
    let lower_at = |j: usize| b.get(j).is_some_and(u8::is_ascii_lowercase);
    while i < b.len() {
        let c = b[i];
        let (text, len): (String, usize) = match c {
            b'J' if at(i, "January") => (month_name.into(), 7),
            b'J' if at(i, "Jan") && !lower_at(i + 3) => (month_name[..3].into(), 3),
            b'M' if at(i, "Monday") => (day_name.into(), 6),
            b'M' if at(i, "Mon") && !lower_at(i + 3) => (day_name[..3].into(), 3),
            b'M' if at(i, "MST") => ("UTC".into(), 3),
            b'0' if b.get(i + 1).is_some_and(|d| (b'1'..=b'6').contains(d)) => (
                match b[i + 1] {
                    b'1' => format!("{month:02}"),
                    b'2' => format!("{day:02}"),
                    b'3' => format!("{hour12:02}"),
                    b'4' => format!("{min:02}"),
                    b'5' => format!("{sec:02}"),
                    _ => format!("{:02}", year.rem_euclid(100)),
                },
                2,
            ),
            b'0' if at(i, "002") => (format!("{yday:03}"), 3),
            b'1' if at(i, "15") => (format!("{hour:02}"), 2),
            b'1' => (month.to_string(), 1),
            b'2' if at(i, "2006") => (long_year(year), 4),
            b'2' => (day.to_string(), 1),
            b'_' if at(i, "_2006") => (format!("_{}", long_year(year)), 5),
            b'_' if at(i, "_2") => (format!("{day:>2}"), 2),
            b'_' if at(i, "__2") => (format!("{yday:>3}"), 3),
            b'3' => (hour12.to_string(), 1),
            b'4' => (min.to_string(), 1),
            b'5' => (sec.to_string(), 1),
            b'P' if at(i, "PM") => ((if hour >= 12 { "PM" } else { "AM" }).into(), 2),
            b'p' if at(i, "pm") => ((if hour >= 12 { "pm" } else { "am" }).into(), 2),
            b'-' if at(i, "-070000") => ("+000000".into(), 7),
            b'-' if at(i, "-07:00:00") => ("+00:00:00".into(), 9),
            b'-' if at(i, "-0700") => ("+0000".into(), 5),
            b'-' if at(i, "-07:00") => ("+00:00".into(), 6),
            b'-' if at(i, "-07") => ("+00".into(), 3),
            b'Z' if at(i, "Z070000") => ("Z".into(), 7),
            b'Z' if at(i, "Z07:00:00") => ("Z".into(), 9),
            b'Z' if at(i, "Z0700") => ("Z".into(), 5),
            b'Z' if at(i, "Z07:00") => ("Z".into(), 6),
            b'Z' if at(i, "Z07") => ("Z".into(), 3),
            b'.' | b',' if matches!(b.get(i + 1), Some(b'0' | b'9')) => {
                let ch = b[i + 1];
                let mut j = i + 1;
                while j < b.len() && b[j] == ch {
                    j += 1;
                }
                if b.get(j).is_some_and(u8::is_ascii_digit) {
                    (char::from(c).to_string(), 1)
                } else {
                    let digits = format!("{:09}", t.nanos);
                    let n = (j - i - 1).min(9);
                    let frac = if ch == b'0' {
                        digits[..n].to_string()
                    } else {
                        digits[..n].trim_end_matches('0').to_string()
                    };
                    if frac.is_empty() {
                        (String::new(), j - i)
                    } else {
                        (format!("{}{frac}", char::from(c)), j - i)
                    }
                }
            }
            _ => {
                // A literal: copy the whole character.
                let ch = layout[i..].chars().next().unwrap_or(' ');
                (ch.to_string(), ch.len_utf8())
            }
        };
        out.push_str(&text);
        i += len;
    }
    Ok(out)
}

/// `appendInt(b, year, 4)`: at least four digits, a sign when negative.
fn long_year(year: i64) -> String {
    if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    }
}

#[cfg(test)]
#[path = "generators_tests.rs"]
mod tests;

//! Sprig's deterministic functions of `crypto.go` (v3.3.0):
//! `derivePassword` and `buildCustomCert`.

use hmac::{KeyInit as _, Mac as _};

use super::args::{arity, s, type_err, R};
use super::encoding::base64_std;
use super::value::V;

/// `masterPasswordSeed`.
const SEED: &[u8] = b"com.lyndir.masterpassword";

/// `passwordTypeTemplates`.
fn templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

/// `templateCharacters`.
fn characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

/// A `uint32` parameter given a number constant: Go truncates it to 32
/// bits (`reflect.Value.SetUint`) and refuses a negative one.
fn uint32(v: &V) -> Result<u32, String> {
    match v {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        V::Int(n) if *n >= 0 => Ok(*n as u32),
        // A negative constant is refused as text/template refuses it, by
        // the executor (`expected unsigned integer; found -1`).
        other => Err(type_err("uint32", other)),
    }
}

/// Big-endian length of a string as Go's `binary.Write` of `uint32(len)`.
fn be_len(b: &[u8]) -> [u8; 4] {
    #[allow(clippy::cast_possible_truncation)]
    (b.len() as u32).to_be_bytes()
}

/// `derivePassword counter type password user site`: the Master Password
/// algorithm (scrypt N=32768 r=8 p=2 of the password salted with the user,
/// HMAC-SHA-256 of the site and counter, characters chosen by its bytes).
pub(super) fn f_derive_password(_: &str, a: &[V], _: usize) -> R {
    arity(a, 5)?;
    let counter = uint32(&a[0])?;
    let (kind, password, user, site) = (s(&a[1])?, s(&a[2])?, s(&a[3])?, s(&a[4])?);
    let Some(templates) = templates(kind) else {
        return Ok(V::Str(format!("cannot find password template {kind}")));
    };
    let mut salt = SEED.to_vec();
    salt.extend(be_len(user.as_bytes()));
    salt.extend(user.as_bytes());
    let params = scrypt::Params::new(15, 8, 2).map_err(|e| e.to_string())?;
    let mut key = [0_u8; 64];
    scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).map_err(|e| e.to_string())?;
    let mut message = SEED.to_vec();
    message.extend(be_len(site.as_bytes()));
    message.extend(site.as_bytes());
    message.extend(counter.to_be_bytes());
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    let out: String = template
        .bytes()
        .enumerate()
        .map(|(i, class)| {
            let chars = characters(class);
            char::from(chars[usize::from(seed[i + 1]) % chars.len()])
        })
        .collect();
    Ok(V::Str(out))
}

#[cfg(test)]
mod tests {
    use super::{f_derive_password, V};

    fn derive(counter: i64, kind: &str, password: &str, user: &str, site: &str) -> V {
        let s = |x: &str| V::Str(x.into());
        f_derive_password(
            "derivePassword",
            &[V::Int(counter), s(kind), s(password), s(user), s(site)],
            0,
        )
        .expect("derives")
    }

    #[test]
    fn derived_passwords_are_sprigs() {
        // helm v3.17.1: the corpus's sem-random-time__default, then
        // `derivePassword 2 "maximum" "pw" "u" "s"` and so on in a chart.
        for (counter, kind, password, user, site, want) in [
            (
                1,
                "long",
                "password",
                "user",
                "example.com",
                "ZedaFaxcZaso9*",
            ),
            (2, "maximum", "pw", "u", "s", "S2$TYTKe9bU9YXWCqT@%"),
            (0, "pin", "", "", "", "2847"),
            // the counter is truncated to 32 bits; the user's length is
            // counted in bytes
            (4_294_967_297, "basic", "p", "\u{fc}", "site", "Jkt5LxI2"),
            (1, "medium", "p", "u", "s", "Rud1@Nel"),
            (1, "short", "p", "u", "s", "Rud1"),
            (
                1,
                "nope",
                "p",
                "u",
                "s",
                "cannot find password template nope",
            ),
        ] {
            assert_eq!(
                derive(counter, kind, password, user, site),
                V::Str(want.into()),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_counter_that_is_no_uint32_is_refused() {
        let s = |x: &str| V::Str(x.into());
        let args = |c: V| vec![c, s("long"), s("p"), s("u"), s("s")];
        assert_eq!(
            f_derive_password("derivePassword", &args(V::Int(-1)), 0),
            Err("wrong type for value; expected uint32; got int".to_string())
        );
        assert_eq!(
            f_derive_password("derivePassword", &args(V::Float(1.5)), 0),
            Err("wrong type for value; expected uint32; got float64".to_string())
        );
    }
}

/// `pem.Block`: its type and bytes.
struct Pem {
    kind: Vec<u8>,
    bytes: Vec<u8>,
}

/// `getLine` of `encoding/pem`: a line less trailing spaces, tabs and
/// `\r`, and the rest.
fn get_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (mut i, j) = match data.iter().position(|&c| c == b'\n') {
        Some(i) => (i, i + 1),
        None => (data.len(), data.len()),
    };
    if j > i && i > 0 && data[i - 1] == b'\r' {
        i -= 1;
    }
    let mut line = &data[..i];
    while let [rest @ .., b' ' | b'\t'] = line {
        line = rest;
    }
    (line, &data[j..])
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `pem.Decode`: the first block.
fn pem_decode(data: &[u8]) -> Option<Pem> {
    const START: &[u8] = b"\n-----BEGIN ";
    const END: &[u8] = b"\n-----END ";
    const DASHES: &[u8] = b"-----";
    let mut rest = data;
    loop {
        if rest.starts_with(&START[1..]) {
            rest = &rest[START.len() - 1..];
        } else if let Some(i) = find_bytes(rest, START) {
            rest = &rest[i + START.len()..];
        } else {
            return None;
        }
        let (type_line, after) = get_line(rest);
        rest = after;
        let Some(kind) = type_line.strip_suffix(DASHES) else {
            continue;
        };
        let mut headers = 0;
        loop {
            if rest.is_empty() {
                return None;
            }
            let (line, next) = get_line(rest);
            if !line.contains(&b':') {
                break;
            }
            headers += 1;
            rest = next;
        }
        let (end, trailer_at) = if headers == 0 && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            match find_bytes(rest, END) {
                Some(i) => (i, i + END.len()),
                None => continue,
            }
        };
        let trailer = &rest[trailer_at..];
        let trailer_len = kind.len() + DASHES.len();
        if trailer.len() < trailer_len {
            continue;
        }
        let (trailer, rest_of_line) = trailer.split_at(trailer_len);
        if !trailer.starts_with(kind)
            || !trailer.ends_with(DASHES)
            || !get_line(rest_of_line).0.is_empty()
        {
            continue;
        }
        let body: Vec<u8> = rest[..end]
            .iter()
            .copied()
            .filter(|c| !matches!(c, b' ' | b'\t'))
            .collect();
        let Some(bytes) = base64_std(&body).ok() else {
            continue;
        };
        return Some(Pem {
            kind: kind.to_vec(),
            bytes,
        });
    }
}

/// One DER element: its tag, its contents and what follows it; `None`
/// where the encoding is not DER (Go's `cryptobyte` reads DER only).
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n || rest[0] == 0 {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0_usize, |l, &b| l << 8 | usize::from(b));
        if len < 0x80 {
            return None;
        }
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;

/// The DER elements `body` holds, tags and contents.
fn elements(mut body: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let (t, content, next) = der(body)?;
        out.push((t, content));
        body = next;
    }
    Some(out)
}

/// The elements of a DER SEQUENCE that is all of `input`, if their tags
/// start with `tags`.
fn sequence<'a>(input: &'a [u8], tags: &[u8]) -> Option<Vec<(u8, &'a [u8])>> {
    let (tag, body, rest) = der(input)?;
    if tag != SEQUENCE || !rest.is_empty() {
        return None;
    }
    let out = elements(body)?;
    (out.len() >= tags.len() && out.iter().zip(tags).all(|((t, _), want)| t == want)).then_some(out)
}

/// Whether Go's `x509.ParseCertificate` would read `input` as far as
/// gitops-lint checks: the certificate's and the TBS certificate's
/// structure, a serial number that is not negative, and the same
/// signature algorithm inside and out.
fn certificate_structure(input: &[u8]) -> bool {
    let Some(outer) = sequence(input, &[SEQUENCE, SEQUENCE, 0x03]) else {
        return false;
    };
    let Some(mut fields) = elements(outer[0].1) else {
        return false;
    };
    if fields.first().is_some_and(|(t, _)| *t == 0xa0) {
        fields.remove(0);
    }
    // serial, signature algorithm, issuer, validity, subject, public key
    let structure = [INTEGER, SEQUENCE, SEQUENCE, SEQUENCE, SEQUENCE, SEQUENCE];
    outer.len() == 3
        && fields.len() >= structure.len()
        && fields.iter().zip(structure).all(|((t, _), want)| *t == want)
        && fields[0].1.first().is_some_and(|b| b & 0x80 == 0)
        && fields[1].1 == outer[1].1
        // issuer and subject unique ids, extensions
        && fields[structure.len()..]
            .iter()
            .all(|(t, _)| matches!(t, 0x81 | 0xa1 | 0x82 | 0xa2 | 0xa3))
}

/// Sprig's `parsePrivateKeyPEM`, as far as gitops-lint checks the key:
/// Go's message for a PEM block of a type it does not read, a refusal
/// where the DER holds no key of the block's type.
fn check_private_key(pem_text: &[u8]) -> Result<(), String> {
    let Some(block) = pem_decode(pem_text) else {
        return Err("no PEM data in input".into());
    };
    let kind = String::from_utf8_lossy(&block.kind).into_owned();
    let shape = if kind == "PRIVATE KEY" {
        // PKCS #8: version, algorithm, key
        sequence(&block.bytes, &[INTEGER, SEQUENCE, 0x04])
    } else if let Some(prefix) = kind.strip_suffix(" PRIVATE KEY") {
        match prefix {
            // PKCS #1: version, n, e, d, p, q, dp, dq, qinv
            "RSA" => sequence(&block.bytes, &[INTEGER; 9]),
            // RFC 5915: version, key
            "EC" => sequence(&block.bytes, &[INTEGER, 0x04]),
            // Sprig's DSAKeyFormat: version, p, q, g, y, x
            "DSA" => sequence(&block.bytes, &[INTEGER; 6]),
            _ => return Err(format!("invalid private key type {kind}")),
        }
    } else {
        return Err(format!("no private key data in PEM block of type {kind}"));
    };
    match shape {
        Some(_) => Ok(()),
        None => Err(der_refusal("private key")),
    }
}

fn der_refusal(what: &str) -> String {
    format!("buildCustomCert of a {what} whose DER Go's x509 would have to judge is not supported by gitops-lint, so this template cannot be evaluated offline")
}

/// `buildCustomCert base64Cert base64Key`: the decoded PEM texts as a
/// `certificate`, once Go's x509 reads them.
pub(super) fn f_build_custom_cert(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let (b64cert, b64key) = (s(&a[0])?, s(&a[1])?);
    let cert = base64_std(b64cert.as_bytes()).map_err(|_| "unable to decode base64 certificate")?;
    let key = base64_std(b64key.as_bytes()).map_err(|_| "unable to decode base64 private key")?;
    let Some(block) = pem_decode(&cert) else {
        return Err("unable to decode certificate".into());
    };
    // x509's first read: a DER SEQUENCE at the start.
    if der(&block.bytes).is_none_or(|(tag, _, _)| tag != SEQUENCE) {
        return Err(
            "error parsing certificate: decodedCert.Bytes: x509: malformed certificate".into(),
        );
    }
    if !certificate_structure(&block.bytes) {
        return Err(der_refusal("certificate"));
    }
    check_private_key(&key).map_err(|e| format!("error parsing private key: {e}"))?;
    let text = |b: Vec<u8>| {
        String::from_utf8(b).map_err(|_| {
            "buildCustomCert of PEM text that is not UTF-8 is not supported by gitops-lint, so this template cannot be evaluated offline".to_string()
        })
    };
    Ok(super::generators::certificate(text(cert)?, text(key)?))
}

#[cfg(test)]
mod cert_tests {
    use super::{f_build_custom_cert, V};

    /// A self-signed P-256 certificate and its key (`openssl req -x509`),
    /// base64 of their PEM text.
    const CERT: &[&str] = &[
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJiVENDQVJPZ0F3SUJBZ0lVRWR4RElLdS80",
        "dGJKYngrdTBQeVBuRUNZNVN3d0NnWUlLb1pJemowRUF3SXcKRERFS01BZ0dBMVVFQXd3QmREQWVG",
        "dzB5TmpFeU1ETXhNalEzTVRKYUZ3MHpOakV4TXpBeE1qUTNNVEphTUF3eApDakFJQmdOVkJBTU1B",
        "WFF3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVQvTGlzejRMRSt1YjJNClNNZGtY",
        "ditZTUwwWEcvTzJGY3FGZVB4Q0FjMnRnV3R6c2RSZDhidHJaVkMvNjRtQS9rZkZPcGh4QlFRM1BY",
        "bDYKdzBwY05KSnJvMU13VVRBZEJnTlZIUTRFRmdRVXdURVgrTmYzOUptNlJtcWVibFNaeDh2NU9v",
        "TXdId1lEVlIwagpCQmd3Rm9BVXdURVgrTmYzOUptNlJtcWVibFNaeDh2NU9vTXdEd1lEVlIwVEFR",
        "SC9CQVV3QXdFQi96QUtCZ2dxCmhrak9QUVFEQWdOSUFEQkZBaUVBZzFuMGFsZUplZjdEMmZpOU5l",
        "VjNvL252QXc0SWpIbmJWelUzTmltS2ZVWUMKSUZmcENhbnJNQlhZUXRScmtwaHpUZ1llaW5NWUVp",
        "RzhuUEpGelVxaW9PSzIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
    ];
    const KEY: &[&str] = &[
        "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUs2ZGNYdjJwODJ2MGp6TWZK",
        "VytsQytDRHBPNjUxRndmT0FkMlhSbWpUblhvQW9HQ0NxR1NNNDkKQXdFSG9VUURRZ0FFL3k0ck0r",
        "Q3hQcm05akVqSFpGNy9tREM5Rnh2enRoWEtoWGo4UWdITnJZRnJjN0hVWGZHNwphMlZRdit1SmdQ",
        "NUh4VHFZY1FVRU56MTVlc05LWERTU2F3PT0KLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo=",
    ];

    fn build(cert: &str, key: &str) -> Result<V, String> {
        let s = |x: &str| V::Str(x.into());
        f_build_custom_cert("buildCustomCert", &[s(cert), s(key)], 0)
    }

    #[test]
    fn a_custom_certificate_holds_the_decoded_pem() {
        // helm v3.17.1: `(buildCustomCert CERT KEY).Cert | sha256sum` and
        // `.Key | sha256sum` printed these digests.
        let V::Host(h) = build(&CERT.concat(), &KEY.concat()).expect("builds") else {
            panic!("a certificate")
        };
        let digest = |f: &str| match h.0.field(f) {
            Some(V::Str(pem)) => {
                use sha2::Digest as _;
                sha2::Sha256::digest(pem.as_bytes())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(h.0.type_name(), "sprig.certificate");
        assert_eq!(
            digest("Cert"),
            "0fb0db7c5b6badbf2e710cab6e00b06ae5eb1b28c3df95ea3f48daea0984a585"
        );
        assert_eq!(
            digest("Key"),
            "a5f02946e92431f939ee461e1661a4462aa418fa02fe34c7b1fa93fa66d6e723"
        );
    }

    #[test]
    fn bad_inputs_fail_as_sprig_words_them() {
        // helm v3.17.1's messages after `error calling buildCustomCert: `.
        let (cert, key) = (CERT.concat(), KEY.concat());
        let b64 = |t: &str| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(t)
        };
        let block = |kind: &str| {
            b64(&format!(
                "-----BEGIN {kind}-----\nAAAA\n-----END {kind}-----\n"
            ))
        };
        for (c, k, want) in [
            (
                "x".to_string(),
                "y".to_string(),
                "unable to decode base64 certificate",
            ),
            (
                cert.clone(),
                "y".to_string(),
                "unable to decode base64 private key",
            ),
            (String::new(), String::new(), "unable to decode certificate"),
            (
                block("CERTIFICATE"),
                key.clone(),
                "error parsing certificate: decodedCert.Bytes: x509: malformed certificate",
            ),
            (
                cert.clone(),
                cert.clone(),
                "error parsing private key: no private key data in PEM block of type CERTIFICATE",
            ),
            (
                cert.clone(),
                block("FOO PRIVATE KEY"),
                "error parsing private key: invalid private key type FOO PRIVATE KEY",
            ),
            (
                cert.clone(),
                b64("hello\n"),
                "error parsing private key: no PEM data in input",
            ),
        ] {
            assert_eq!(build(&c, &k).map(|_| ()), Err(want.to_string()), "{want}");
        }
        // DER Go's x509 would judge further is refused.
        assert!(build(&cert, &block("RSA PRIVATE KEY"))
            .expect_err("not a key")
            .contains("not supported by gitops-lint"));
    }
}

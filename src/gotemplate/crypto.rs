//! Sprig's deterministic functions of `crypto.go` (v3.3.0):
//! `derivePassword` and `buildCustomCert`.

use hmac::{KeyInit as _, Mac as _};

use super::funcs::{arity, s, type_err};
use super::value::V;

type R = Result<V, String>;

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
        V::Int(n) => Err(format!("expected unsigned integer; found {n}")),
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
            Err("expected unsigned integer; found -1".to_string())
        );
        assert_eq!(
            f_derive_password("derivePassword", &args(V::Float(1.5)), 0),
            Err("wrong type for value; expected uint32; got float64".to_string())
        );
    }
}

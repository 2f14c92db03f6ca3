//! Go's `encoding/base64` and `encoding/base32` decoders with their
//! `StdEncoding`s (padded, non-strict). Sprig's `b64dec` and `b32dec` put
//! the decoder's error text into the rendered manifest
//! (`illegal base64 data at input byte N`), so the byte Go names is part
//! of the output: no crate reports Go's positions, so the decoding loops
//! follow Go's `decodeQuantum` (base64.go) and `decode` (base32.go).
//! Encoding has no such corner and stays with the `base64` and
//! `data-encoding` crates.

/// Go's `base64.StdEncoding.DecodeString`: `\r` and `\n` are skipped
/// anywhere, padding is required, trailing bits are not checked. The error
/// is Go's `CorruptInputError` text, counted in bytes of the input as
/// given (newlines included).
pub(crate) fn base64_std(src: &[u8]) -> Result<Vec<u8>, String> {
    let err = |at: usize| format!("illegal base64 data at input byte {at}");
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    };
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    // Go's `Decode` runs `decodeQuantum` until the input is consumed; its
    // 8- and 4-byte fast paths decode the same quanta and fall back to it
    // on anything unusual.
    while si < src.len() {
        let mut quantum = [0_u32; 4];
        let mut dlen = 4;
        let mut trailing_garbage = None;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                // StdEncoding pads, so a short final quantum is an error.
                return Err(err(si - j));
            }
            let c = src[si];
            si += 1;
            if let Some(v) = value(c) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(err(si - 1));
            }
            if j == 2 {
                // "==" is expected; the first one is read.
                while si < src.len() && matches!(src[si], b'\n' | b'\r') {
                    si += 1;
                }
                if si == src.len() {
                    return Err(err(src.len()));
                }
                if src[si] != b'=' {
                    return Err(err(si - 1));
                }
                si += 1;
            }
            while si < src.len() && matches!(src[si], b'\n' | b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_garbage = Some(si);
            }
            dlen = j;
            break;
        }
        let v = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3];
        let bytes = v.to_be_bytes();
        out.extend_from_slice(&bytes[1..dlen]);
        if let Some(at) = trailing_garbage {
            return Err(err(at));
        }
    }
    Ok(out)
}

/// Go's `base32.StdEncoding.DecodeString`: `\r` and `\n` are removed
/// first, so the error's byte counts the input without them; padding is
/// required and a padded quantum must be one RFC 4648 allows.
pub(crate) fn base32_std(input: &[u8]) -> Result<Vec<u8>, String> {
    let err = |at: usize| format!("illegal base32 data at input byte {at}");
    let value = |c: u8| -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'2'..=b'7' => Some(c - b'2' + 26),
            _ => None,
        }
    };
    let src: Vec<u8> = input
        .iter()
        .copied()
        .filter(|c| !matches!(c, b'\r' | b'\n'))
        .collect();
    let olen = src.len();
    let mut out = Vec::with_capacity(olen / 8 * 5);
    let mut pos = 0;
    let mut end = false;
    while pos < olen && !end {
        let mut quantum = [0_u8; 8];
        let mut dlen = 8;
        let mut j = 0;
        while j < 8 {
            if pos == olen {
                // StdEncoding pads: the input ended inside a quantum.
                return Err(err(pos - j));
            }
            let c = src[pos];
            pos += 1;
            let left = olen - pos;
            if c == b'=' && j >= 2 && left < 8 {
                if left + j < 7 {
                    return Err(err(olen));
                }
                for k in 0..7 - j {
                    if left > k && src[pos + k] != b'=' {
                        return Err(err(pos + k - 1));
                    }
                }
                dlen = j;
                end = true;
                // RFC 4648 allows 6, 4, 3 or 1 padding characters only.
                if matches!(dlen, 1 | 3 | 6) {
                    return Err(err(pos - 1));
                }
                break;
            }
            let Some(v) = value(c) else {
                return Err(err(pos - 1));
            };
            quantum[j] = v;
            j += 1;
        }
        let q = &quantum;
        let packed = [
            q[0] << 3 | q[1] >> 2,
            q[1] << 6 | q[2] << 1 | q[3] >> 4,
            q[3] << 4 | q[4] >> 1,
            q[4] << 7 | q[5] << 2 | q[6] >> 3,
            q[6] << 5 | q[7],
        ];
        let bytes = match dlen {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            _ => 1,
        };
        out.extend_from_slice(&packed[..bytes]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{base32_std, base64_std};

    fn text(r: Result<Vec<u8>, String>) -> String {
        r.map_or_else(|e| e, |b| String::from_utf8_lossy(&b).into_owned())
    }

    /// What `helm template` v3.17.1 renders for `b64dec` of each input
    /// (recorded in testdata/helm-encoding; the oracle test replays it).
    #[test]
    fn base64_errors_name_the_byte_go_names() {
        for (input, want) in [
            ("aGVsbG8=", "hello"),
            ("aGVsbG9=", "hello"),
            ("aGVs\nbG8=", "hello"),
            ("aGVsbG8", "illegal base64 data at input byte 4"),
            ("YQ==YQ==", "illegal base64 data at input byte 4"),
            ("YQ=", "illegal base64 data at input byte 3"),
            ("Y===", "illegal base64 data at input byte 1"),
            ("", ""),
        ] {
            assert_eq!(text(base64_std(input.as_bytes())), want, "{input:?}");
        }
    }

    #[test]
    fn base32_errors_name_the_byte_go_names() {
        for (input, want) in [
            ("NBSWY3DP", "hello"),
            ("NBSWY3D", "illegal base32 data at input byte 0"),
            ("NBSWY3DPEE", "illegal base32 data at input byte 8"),
            ("NBSWY3DP========", "illegal base32 data at input byte 8"),
            ("NB=SWY3DP", "illegal base32 data at input byte 2"),
            ("NBSWY3DPE=======", "illegal base32 data at input byte 9"),
            ("NBSWY3DPEE=====", "illegal base32 data at input byte 15"),
            ("MZX=====", "illegal base32 data at input byte 3"),
            ("MZ======", "f"),
            ("NBSW\nY3DP", "hello"),
        ] {
            assert_eq!(text(base32_std(input.as_bytes())), want, "{input:?}");
        }
    }
}

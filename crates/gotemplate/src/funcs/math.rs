//! Sprig's numbers (`numeric.go`, `functions.go`): integer arithmetic in
//! `int64`, `floor`/`ceil`/`round`, the exact decimals of `addf` and its
//! kin (shopspring/decimal), conversions (`atoi`, `int64`, `float64`) and
//! number ranges (`until`, `untilStep`, `seq`).

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use crate::args::{arity, at_least, fits, int, s, to_f64, to_i64, R};
use crate::limits::BEYOND_LIMITS;
use crate::value::V;

/// Sprig's `seq`: `seq end`, `seq start end`, `seq start step end`, the
/// numbers joined by spaces (`numeric.go` `seq`).
pub(super) fn f_seq(_: &str, a: &[V], room: usize) -> R {
    let p: Vec<i64> = a.iter().map(int).collect::<Result<_, _>>()?;
    let list = match p.as_slice() {
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            range_list(1, end.saturating_add(inc), inc, room)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            range_list(*start, end.saturating_add(step), step, room)?
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if *step > 0 {
                    return Ok(V::Str(String::new()));
                }
            }
            range_list(*start, end.saturating_add(inc), *step, room)?
        }
        _ => return Ok(V::Str(String::new())),
    };
    let V::List(l) = list else {
        return Ok(V::Str(String::new()));
    };
    Ok(V::Str(
        l.iter().map(V::go_string).collect::<Vec<_>>().join(" "),
    ))
}

/// A decimal number `m × 10^e`, as shopspring/decimal holds one.
#[derive(Clone, Copy)]
struct Dec {
    m: i128,
    e: i32,
}

const DEC_LIMIT: &str = "a decimal result too large for gitops-lint to compute exactly";

impl Dec {
    /// `decimal.NewFromFloat`: the shortest decimal that reads back as `f`.
    fn from_f64(f: f64) -> Result<Dec, String> {
        if !f.is_finite() {
            return Err(format!("cannot convert {f} to a decimal"));
        }
        let text = format!("{f:e}");
        let (mant, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().map_err(|_| DEC_LIMIT.to_string())?;
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let digits = format!("{int}{frac}");
        let m: i128 = digits.parse().map_err(|_| DEC_LIMIT.to_string())?;
        let e = exp - i32::try_from(frac.len()).map_err(|_| DEC_LIMIT.to_string())?;
        Ok(Dec { m, e })
    }

    fn scaled(self, e: i32) -> Option<i128> {
        // `self` at exponent `e <= self.e`.
        let k = u32::try_from(self.e - e).ok()?;
        self.m.checked_mul(10i128.checked_pow(k)?)
    }

    fn add(self, o: Dec, sign: i128) -> Option<Dec> {
        let e = self.e.min(o.e);
        Some(Dec {
            m: self
                .scaled(e)?
                .checked_add(o.scaled(e)?.checked_mul(sign)?)?,
            e,
        })
    }

    fn mul(self, o: Dec) -> Option<Dec> {
        Some(Dec {
            m: self.m.checked_mul(o.m)?,
            e: self.e.checked_add(o.e)?,
        })
    }

    /// `Decimal.Div`: `DivRound` to 16 places, half away from zero.
    fn div(self, o: Dec) -> Result<Dec, String> {
        if o.m == 0 {
            return Err("decimal division by 0".into());
        }
        let k = self.e - o.e + 16;
        let (num, den) = if k >= 0 {
            let p = 10i128.checked_pow(u32::try_from(k).map_err(|_| DEC_LIMIT)?);
            (p.and_then(|p| self.m.checked_mul(p)), Some(o.m))
        } else {
            let p = 10i128.checked_pow(u32::try_from(-k).map_err(|_| DEC_LIMIT)?);
            (Some(self.m), p.and_then(|p| o.m.checked_mul(p)))
        };
        let (Some(num), Some(den)) = (num, den) else {
            return Err(DEC_LIMIT.into());
        };
        let (q, r) = (num / den, num % den);
        let q = if r.unsigned_abs().saturating_mul(2) >= den.unsigned_abs() {
            q + if (num < 0) == (den < 0) { 1 } else { -1 }
        } else {
            q
        };
        Ok(Dec { m: q, e: -16 })
    }

    /// `Decimal.Float64`: the nearest float.
    fn to_f64(self) -> f64 {
        format!("{}e{}", self.m, self.e).parse().unwrap_or(f64::NAN)
    }
}

/// Sprig's `addf`, `add1f`, `subf`, `mulf`, `divf`: exact decimal
/// arithmetic over the arguments' shortest decimal forms, then the nearest
/// float (`execDecimalOp`), so `addf 0.1 0.2` is `0.3`.
pub(super) fn f_decimal(name: &str, a: &[V], _: usize) -> R {
    let (first, rest): (f64, Vec<f64>) = match name {
        "addf" => (0.0, a.iter().map(to_f64).collect()),
        "add1f" => {
            arity(a, 1)?;
            (to_f64(&a[0]), vec![1.0])
        }
        _ => {
            at_least(a, 1)?;
            (to_f64(&a[0]), a[1..].iter().map(to_f64).collect())
        }
    };
    let mut acc = Dec::from_f64(first)?;
    for x in rest {
        let d = Dec::from_f64(x)?;
        acc = match name {
            "addf" | "add1f" => acc.add(d, 1).ok_or(DEC_LIMIT)?,
            "subf" => acc.add(d, -1).ok_or(DEC_LIMIT)?,
            "mulf" => acc.mul(d).ok_or(DEC_LIMIT)?,
            _ => acc.div(d)?,
        };
    }
    Ok(V::Float(acc.to_f64()))
}

/// Sprig's `maxf`/`minf` (`math.Max`, `math.Min`).
pub(super) fn f_maxf(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let mut acc = to_f64(&a[0]);
    for b in &a[1..] {
        let b = to_f64(b);
        acc = if name == "maxf" {
            acc.max(b)
        } else {
            acc.min(b)
        };
    }
    Ok(V::Float(acc))
}

/// Sprig's `round value places [roundOn]`.
pub(super) fn f_round(_: &str, a: &[V], _: usize) -> R {
    if a.len() < 2 || a.len() > 3 {
        return Err(format!("wrong number of args: want 2 or 3 got {}", a.len()));
    }
    let round_on = a.get(2).map_or(0.5, to_f64);
    let val = to_f64(&a[0]);
    let pow = 10f64.powf(to_f64(&V::Int(int(&a[1])?)));
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(V::Float(r / pow))
}

pub(super) fn f_atoi(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Int(s(&a[0])?.parse().unwrap_or(0)))
}

/// Sprig's `int` (`cast.ToInt`, an `int`) and `int64` (`cast.ToInt64`, an
/// `int64`): the same value on a 64-bit machine, of different types
/// (numeric.go@v3.3.0 `toInt`, `toInt64`).
pub(super) fn f_int64(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let n = to_i64(&a[0]);
    Ok(if name == "int" {
        V::Int(n)
    } else {
        V::Int64(n)
    })
}

pub(super) fn f_float64(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Float(to_f64(&a[0])))
}

pub(super) fn f_until(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let n = int(&a[0])?;
    range_list(0, n, if n < 0 { -1 } else { 1 }, room)
}

pub(super) fn f_until_step(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    range_list(int(&a[0])?, int(&a[1])?, int(&a[2])?, room)
}

pub(super) fn f_add1(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Int64(to_i64(&a[0]).wrapping_add(1)))
}

// Sprig's integer arithmetic returns `int64` (functions.go@v3.3.0 `add1`,
// `add`, `sub`, `div`, `mod`, `mul`; numeric.go `max`, `min`).
pub(super) fn f_add(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Int64(a.iter().map(to_i64).fold(0i64, i64::wrapping_add)))
}

pub(super) fn f_sub(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Int64(to_i64(&a[0]).wrapping_sub(to_i64(&a[1]))))
}

pub(super) fn f_mul(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::Int64(a.iter().map(to_i64).fold(1i64, i64::wrapping_mul)))
}

pub(super) fn f_div(name: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let (x, y) = (to_i64(&a[0]), to_i64(&a[1]));
    if y == 0 {
        return Err("runtime error: integer divide by zero".into());
    }
    Ok(V::Int64(if name == "div" {
        x.wrapping_div(y)
    } else {
        x.wrapping_rem(y)
    }))
}

pub(super) fn f_max(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let vals = a.iter().map(to_i64);
    Ok(V::Int64(if name == "min" {
        vals.min().unwrap_or(0)
    } else {
        vals.max().unwrap_or(0)
    }))
}

pub(super) fn f_floor(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let f = to_f64(&a[0]);
    Ok(V::Float(if name == "floor" { f.floor() } else { f.ceil() }))
}

fn range_list(start: i64, stop: i64, step: i64, room: usize) -> R {
    let mut out = Vec::new();
    if step == 0 {
        return Ok(V::List(out));
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(V::Int(i));
        if out.len() > 1_000_000 {
            return Err(format!(
                "a range of more than 1000000 numbers {BEYOND_LIMITS}"
            ));
        }
        fits(out.len().saturating_mul(crate::value::NODE_COST), room)?;
        i = match i.checked_add(step) {
            Some(n) => n,
            None => break,
        };
    }
    Ok(V::List(out))
}

//! JSON Schema numbers as santhosh-tekuri/jsonschema/v6 v6.0.2 reads them:
//! every number, of the schema or of the values, is the `big.Rat` of its
//! decimal text (`new(big.Rat).SetString(fmt.Sprint(v))` in `util.go`
//! `equals`, `validator.go` `numValidate`), so a float64 counts as the
//! shortest decimal that reads back as it (`0.1` is one tenth), and the
//! numbers in its messages are printed by golang.org/x/text/message's
//! English printer (`1,200`, `1.2345678×10⁰⁷`).

use std::cmp::Ordering;

/// An exact decimal: `0.digits × 10^point`, negative when `neg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Dec {
    neg: bool,
    /// ASCII digits without leading or trailing zeros; empty for zero.
    digits: String,
    point: i32,
}

impl Dec {
    pub(super) fn from_i64(i: i64) -> Dec {
        Dec::from_integer(i < 0, &i.unsigned_abs().to_string())
    }

    pub(super) fn from_u64(u: u64) -> Dec {
        Dec::from_integer(false, &u.to_string())
    }

    fn from_integer(neg: bool, digits: &str) -> Dec {
        Dec::from_parts(neg, digits, i32::try_from(digits.len()).unwrap_or(i32::MAX))
    }

    /// The shortest decimal of `f` that reads back as it (Go's `%v` and
    /// Rust's `{:e}` pick the same digits); `None` for NaN and infinities,
    /// which `big.Rat.SetString` does not read.
    pub(super) fn from_f64(f: f64) -> Option<Dec> {
        if !f.is_finite() {
            return None;
        }
        let text = format!("{:e}", f.abs());
        let (mantissa, exp) = text.split_once('e')?;
        let exp: i32 = exp.parse().ok()?;
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{int}{frac}");
        // `int` is one digit: the value is int.frac × 10^exp.
        Some(Dec::from_parts(f < 0.0, &digits, exp + 1))
    }

    pub(super) fn from_json(n: &serde_json::Number) -> Option<Dec> {
        if let Some(u) = n.as_u64() {
            Some(Dec::from_u64(u))
        } else if let Some(i) = n.as_i64() {
            Some(Dec::from_i64(i))
        } else {
            n.as_f64().and_then(Dec::from_f64)
        }
    }

    /// `0.digits × 10^point` from digits that may have zeros at either end.
    fn from_parts(neg: bool, digits: &str, point: i32) -> Dec {
        let lead = digits.len() - digits.trim_start_matches('0').len();
        let d = digits.trim_start_matches('0').trim_end_matches('0');
        if d.is_empty() {
            return Dec {
                neg: false,
                digits: String::new(),
                point: 0,
            };
        }
        Dec {
            neg,
            digits: d.to_string(),
            point: point - i32::try_from(lead).unwrap_or(0),
        }
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// `big.Rat.IsInt`.
    pub(super) fn is_integer(&self) -> bool {
        usize::try_from(self.point).is_ok_and(|p| self.digits.len() <= p)
    }

    /// The value as a count, if it is a non-negative integer that fits
    /// (`objCompiler.intVal`).
    pub(super) fn as_count(&self) -> Option<usize> {
        if self.neg || !self.is_integer() {
            return None;
        }
        let zeros = usize::try_from(self.point).ok()? - self.digits.len();
        format!("{}{}", self.digits, "0".repeat(zeros.min(40)))
            .parse()
            .ok()
            .or(self.is_zero().then_some(0))
    }

    /// Whether `self / by` is an integer (`multipleOf`); `None` when the
    /// digits are too many to work out here.
    pub(super) fn is_multiple_of(&self, by: &Dec) -> Option<bool> {
        if self.is_zero() {
            return Some(true);
        }
        if by.is_zero() {
            return None;
        }
        // self = A × 10^ea, by = B × 10^eb with A, B integers.
        let a: u128 = self.digits.parse().ok()?;
        let b: u128 = by.digits.parse().ok()?;
        let ea = self.point - i32::try_from(self.digits.len()).ok()?;
        let eb = by.point - i32::try_from(by.digits.len()).ok()?;
        let k = ea - eb;
        if k >= 0 {
            // A × 10^k ≡ 0 (mod B)
            let mut r = a % b;
            for _ in 0..k.min(4096) {
                if r == 0 {
                    break;
                }
                r = (r * 10) % b;
            }
            Some(r == 0)
        } else {
            // A ≡ 0 (mod B × 10^-k)
            let mut m = b;
            for _ in 0..-k {
                match m.checked_mul(10) {
                    Some(n) => m = n,
                    // B × 10^-k is beyond A, which is not zero.
                    None => return Some(false),
                }
            }
            Some(a.is_multiple_of(m))
        }
    }

    /// The float64 nearest to the value (`big.Rat.Float64`).
    fn to_f64(&self) -> f64 {
        if self.is_zero() {
            return 0.0;
        }
        let text = format!(
            "{}0.{}e{}",
            if self.neg { "-" } else { "" },
            self.digits,
            self.point
        );
        text.parse().unwrap_or(f64::NAN)
    }

    /// The number as `message.Printer.Sprintf("%v", x)` prints the float64
    /// `x` nearest to it (`kind.Minimum` and the other bounds): the shortest
    /// digits in exponent form when the exponent is below -4 or at least 6
    /// (`strconv` `%g`, which takes precision 6 for that choice when the
    /// digits are the shortest), written `×10` and a superscript exponent
    /// of at least two digits; else plain, the integer digits grouped by
    /// thousands.
    pub(super) fn print_float(&self) -> String {
        let Some(d) = Dec::from_f64(self.to_f64()) else {
            return String::new();
        };
        if d.is_zero() {
            return "0".into();
        }
        let sign = if d.neg { "-" } else { "" };
        let exp = d.point - 1;
        if !(-4..6).contains(&exp) {
            let (first, rest) = d.digits.split_at(1);
            let mantissa = if rest.is_empty() {
                first.to_string()
            } else {
                format!("{first}.{rest}")
            };
            let digits = format!("{:02}", exp.unsigned_abs());
            let sup: String = digits.chars().map(superscript).collect();
            let minus = if exp < 0 { "⁻" } else { "" };
            return format!("{sign}{mantissa}×10{minus}{sup}");
        }
        let (int, frac) = if d.point <= 0 {
            (
                "0".to_string(),
                format!(
                    "{}{}",
                    "0".repeat(d.point.unsigned_abs() as usize),
                    d.digits
                ),
            )
        } else {
            let p = d.point.unsigned_abs() as usize;
            if d.digits.len() <= p {
                (
                    format!("{}{}", d.digits, "0".repeat(p - d.digits.len())),
                    String::new(),
                )
            } else {
                (d.digits[..p].to_string(), d.digits[p..].to_string())
            }
        };
        let int = group_thousands(&int);
        if frac.is_empty() {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    }
}

impl Ord for Dec {
    fn cmp(&self, other: &Dec) -> Ordering {
        let sign = |d: &Dec| match (d.is_zero(), d.neg) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal => {}
            o => return o,
        }
        let magnitude = self
            .point
            .cmp(&other.point)
            .then_with(|| self.digits.cmp(&other.digits));
        if self.neg {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Dec {
    fn partial_cmp(&self, other: &Dec) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn superscript(c: char) -> char {
    match c {
        '0' => '⁰',
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        '4' => '⁴',
        '5' => '⁵',
        '6' => '⁶',
        '7' => '⁷',
        '8' => '⁸',
        _ => '⁹',
    }
}

/// Integer digits grouped by thousands, as x/text's English printer
/// writes `%d` and the integer part of `%v`.
fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An `int` as `message.Printer.Sprintf("%d", n)` prints it.
pub(super) fn print_int(n: usize) -> String {
    group_thousands(&n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_compare_and_divide_as_big_rat_does() {
        let f = |x: f64| Dec::from_f64(x).unwrap();
        assert!(f(0.1) < f(0.2));
        assert!(f(-1.5) < f(-1.0));
        assert!(Dec::from_i64(-3) < f(0.0));
        assert_eq!(Dec::from_i64(3), f(3.0));
        assert!(f(3.0).is_integer() && !f(2.5).is_integer() && f(1e21).is_integer());
        // 0.07 is seven hundredths, a multiple of 0.01 (float64 division
        // would say otherwise).
        assert_eq!(f(0.07).is_multiple_of(&f(0.01)), Some(true));
        assert_eq!(f(0.075).is_multiple_of(&f(0.01)), Some(false));
        assert_eq!(Dec::from_i64(12000).is_multiple_of(&f(1000.0)), Some(true));
        assert_eq!(Dec::from_i64(7).is_multiple_of(&f(2.0)), Some(false));
    }

    #[test]
    fn numbers_print_as_x_text_prints_them() {
        // Printed by helm v4.1.4 in `minimum`/`maximum` messages.
        let f = |x: f64| Dec::from_f64(x).unwrap().print_float();
        assert_eq!(f(0.123_456_789), "0.123456789");
        assert_eq!(f(1234.56789), "1,234.56789");
        assert_eq!(f(123_456.75), "123,456.75");
        assert_eq!(f(-1500.0), "-1,500");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(0.00001), "1×10⁻⁰⁵");
        assert_eq!(f(123_456.0), "123,456");
        assert_eq!(f(1_234_567.0), "1.234567×10⁰⁶");
        assert_eq!(f(12_345_678.0), "1.2345678×10⁰⁷");
        assert_eq!(f(1e20), "1×10²⁰");
        assert_eq!(f(-0.5), "-0.5");
        assert_eq!(print_int(1200), "1,200");
        assert_eq!(print_int(3), "3");
    }
}

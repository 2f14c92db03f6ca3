//! Go's `time` package as Sprig's date functions use it, in UTC:
//! `time.Parse` (`time/format.go` `parse`), `time.ParseDuration`,
//! `Duration.String` and `Duration.Round`. Error messages are Go's.

/// A layout element (`time/format.go` `std…` constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    Iso8601TZ,
    Iso8601SecondsTZ,
    Iso8601ShortTZ,
    Iso8601ColonTZ,
    Iso8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// `.000`: the number of digits (Go keeps 12 bits of it).
    Frac0(usize),
    /// `.999`.
    Frac9(usize),
}

/// `nextStdChunk`: the text before the first layout element, the element
/// (`None` at the end) and the text after it.
fn next_std_chunk(layout: &[u8]) -> (&[u8], Option<Std>, &[u8]) {
    let at = |i: usize, p: &str| layout[i..].starts_with(p.as_bytes());
    let lower_at = |j: usize| layout.get(j).is_some_and(u8::is_ascii_lowercase);
    for i in 0..layout.len() {
        let (std, len) = match layout[i] {
            b'J' if at(i, "January") => (Std::LongMonth, 7),
            b'J' if at(i, "Jan") && !lower_at(i + 3) => (Std::Month, 3),
            b'M' if at(i, "Monday") => (Std::LongWeekDay, 6),
            b'M' if at(i, "Mon") && !lower_at(i + 3) => (Std::WeekDay, 3),
            b'M' if at(i, "MST") => (Std::TZ, 3),
            b'0' if layout.get(i + 1).is_some_and(|d| (b'1'..=b'6').contains(d)) => {
                let std = [
                    Std::ZeroMonth,
                    Std::ZeroDay,
                    Std::ZeroHour12,
                    Std::ZeroMinute,
                    Std::ZeroSecond,
                    Std::Year,
                ][usize::from(layout[i + 1] - b'1')];
                (std, 2)
            }
            b'0' if at(i, "002") => (Std::ZeroYearDay, 3),
            b'1' if at(i, "15") => (Std::Hour, 2),
            b'1' => (Std::NumMonth, 1),
            b'2' if at(i, "2006") => (Std::LongYear, 4),
            b'2' => (Std::Day, 1),
            // `_2006` is a literal `_` and the year.
            b'_' if at(i, "_2006") => {
                return (&layout[..=i], Some(Std::LongYear), &layout[i + 5..])
            }
            b'_' if at(i, "_2") => (Std::UnderDay, 2),
            b'_' if at(i, "__2") => (Std::UnderYearDay, 3),
            b'3' => (Std::Hour12, 1),
            b'4' => (Std::Minute, 1),
            b'5' => (Std::Second, 1),
            b'P' if at(i, "PM") => (Std::PM, 2),
            b'p' if at(i, "pm") => (Std::Pm, 2),
            b'-' if at(i, "-070000") => (Std::NumSecondsTz, 7),
            b'-' if at(i, "-07:00:00") => (Std::NumColonSecondsTZ, 9),
            b'-' if at(i, "-0700") => (Std::NumTZ, 5),
            b'-' if at(i, "-07:00") => (Std::NumColonTZ, 6),
            b'-' if at(i, "-07") => (Std::NumShortTZ, 3),
            b'Z' if at(i, "Z070000") => (Std::Iso8601SecondsTZ, 7),
            b'Z' if at(i, "Z07:00:00") => (Std::Iso8601ColonSecondsTZ, 9),
            b'Z' if at(i, "Z0700") => (Std::Iso8601TZ, 5),
            b'Z' if at(i, "Z07:00") => (Std::Iso8601ColonTZ, 6),
            b'Z' if at(i, "Z07") => (Std::Iso8601ShortTZ, 3),
            b'.' | b',' if matches!(layout.get(i + 1), Some(b'0' | b'9')) => {
                let ch = layout[i + 1];
                let mut j = i + 1;
                while j < layout.len() && layout[j] == ch {
                    j += 1;
                }
                // Only a fraction of the second is all digits.
                if layout.get(j).is_some_and(u8::is_ascii_digit) {
                    continue;
                }
                let n = (j - i - 1) & 0xfff;
                let std = if ch == b'0' {
                    Std::Frac0(n)
                } else {
                    Std::Frac9(n)
                };
                return (&layout[..i], Some(std), &layout[j..]);
            }
            _ => continue,
        };
        return (&layout[..i], Some(std), &layout[i + len..]);
    }
    (layout, None, &[])
}

/// `time`'s own `quote` (not `strconv.Quote`): bytes of a rune that is not
/// printable ASCII as `\xNN`.
pub(crate) fn quote(s: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c < 0x80 {
            if c < b' ' {
                out.push_str(&format!("\\x{c:02x}"));
            } else {
                if c == b'"' || c == b'\\' {
                    out.push('\\');
                }
                out.push(char::from(c));
            }
            i += 1;
            continue;
        }
        // The width of the rune at `i`: an invalid byte is one rune.
        let n = match c {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 1,
        };
        let width = if i + n <= s.len() && n > 1 && std::str::from_utf8(&s[i..i + n]).is_ok() {
            n
        } else {
            1
        };
        for b in &s[i..i + width] {
            out.push_str(&format!("\\x{b:02x}"));
        }
        i += width;
    }
    out.push('"');
    out
}

/// `ParseError.Error`.
fn parse_error(
    layout: &[u8],
    value: &[u8],
    layout_elem: &[u8],
    value_elem: &[u8],
    message: &str,
) -> String {
    if message.is_empty() {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout),
            quote(value_elem),
            quote(layout_elem)
        )
    } else {
        format!("parsing time {}{message}", quote(value))
    }
}

/// Go's month names (`time/format.go` `longMonthNames`).
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Go's day names (`time/format.go` `longDayNames`).
pub(crate) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `lookup`: the index of the name `val` starts with, ignoring ASCII case.
fn lookup<'a>(names: &[&str], val: &'a [u8]) -> Option<(i64, &'a [u8])> {
    for (i, name) in names.iter().enumerate() {
        let name = name.as_bytes();
        if val.len() >= name.len() && val[..name.len()].eq_ignore_ascii_case(name) {
            return Some((i64::try_from(i).unwrap_or(0), &val[name.len()..]));
        }
    }
    None
}

fn is_digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// `getnum`: one or two digits (two when `fixed`).
fn getnum(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    if !is_digit(s, 0) {
        return None;
    }
    if !is_digit(s, 1) {
        if fixed {
            return None;
        }
        return Some((i64::from(s[0] - b'0'), &s[1..]));
    }
    Some((
        i64::from(s[0] - b'0') * 10 + i64::from(s[1] - b'0'),
        &s[2..],
    ))
}

/// `getnum3`: one to three digits (three when `fixed`).
fn getnum3(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let mut n = 0;
    let mut i = 0;
    while i < 3 && is_digit(s, i) {
        n = n * 10 + i64::from(s[i] - b'0');
        i += 1;
    }
    if i == 0 || (fixed && i != 3) {
        return None;
    }
    Some((n, &s[i..]))
}

/// `leadingInt`: the leading digits, `None` past 1<<63.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > 1 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// `atoi`: an optionally signed decimal number and nothing else.
fn atoi(s: &[u8]) -> Option<i64> {
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (q, rem) = leading_int(body)?;
    if !rem.is_empty() {
        return None;
    }
    #[allow(clippy::cast_possible_wrap)]
    let x = q as i64;
    Some(if neg { x.wrapping_neg() } else { x })
}

/// `parseNanoseconds`: the fraction `value[..nbytes]` (its separator
/// first) in nanoseconds, or a range error's field.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<i64, Option<&'static str>> {
    if !matches!(value.first(), Some(b'.' | b',')) {
        return Err(None);
    }
    let nbytes = nbytes.min(10);
    let ns = atoi(&value[1..nbytes]).ok_or(None)?;
    if ns < 0 {
        return Err(Some("fractional second"));
    }
    let mut ns = ns;
    for _ in 0..10 - nbytes {
        ns *= 10;
    }
    Ok(ns)
}

/// `parseTimeZone`: the length of a zone abbreviation at the start.
fn parse_time_zone(value: &[u8]) -> Option<usize> {
    if value.len() < 3 {
        return None;
    }
    if value.starts_with(b"ChST") || value.starts_with(b"MeST") {
        return Some(4);
    }
    if value.starts_with(b"GMT") {
        // `parseGMT`
        if value.len() == 3 {
            return Some(3);
        }
        return Some(3 + parse_signed_offset(&value[3..]));
    }
    if value[0] == b'+' || value[0] == b'-' {
        let n = parse_signed_offset(value);
        return (n > 0).then_some(n);
    }
    let upper = value
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        5 if value[4] == b'T' => Some(5),
        4 if value[3] == b'T' || value.starts_with(b"WITA") => Some(4),
        3 => Some(3),
        _ => None,
    }
}

/// `parseSignedOffset`: the length of `+NN`/`-NN` (up to 23) at the start.
fn parse_signed_offset(value: &[u8]) -> usize {
    if !matches!(value.first(), Some(b'+' | b'-')) {
        return 0;
    }
    match leading_int(&value[1..]) {
        Some((x, rem)) if rem.len() != value.len() - 1 && x <= 23 => value.len() - rem.len(),
        _ => 0,
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days before the first of `month` (1-12) in a year that is not leap.
fn days_before(month: i64) -> i64 {
    const BEFORE: [i64; 13] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
    BEFORE[usize::try_from(month - 1).unwrap_or(0).min(12)]
}

fn days_in(month: i64, year: i64) -> i64 {
    if month == 2 && is_leap(year) {
        29
    } else {
        days_before(month + 1) - days_before(month)
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What `time.ParseInLocation(layout, value, time.Local)` gives where the
/// local zone is UTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A UTC instant: Unix seconds and nanoseconds.
    Utc(i64, u32),
    /// A time in another zone (an offset or a zone name UTC does not
    /// know), which gitops-lint does not represent.
    OtherZone,
}

/// `time.ParseInLocation(layout, value, time.Local)` with a UTC local
/// zone (`time/format.go` `parse`).
///
/// # Errors
/// Go's `ParseError` message.
pub(crate) fn parse(layout: &str, value: &str) -> Result<Parsed, String> {
    let (alayout, avalue) = (layout.as_bytes(), value.as_bytes());
    let (mut layout, mut value) = (alayout, avalue);
    let (mut am, mut pm) = (false, false);
    let (mut year, mut month, mut day, mut yday) = (0_i64, -1_i64, -1_i64, -1_i64);
    let (mut hour, mut min, mut sec, mut nsec) = (0_i64, 0_i64, 0_i64, 0_i64);
    let mut utc = false;
    let mut zone_offset: i64 = -1;
    let mut zone_name: &[u8] = &[];
    loop {
        let (prefix, std, suffix) = next_std_chunk(layout);
        let stdstr = &layout[prefix.len()..layout.len() - suffix.len()];
        value = skip(value, prefix)
            .ok_or_else(|| parse_error(alayout, avalue, prefix, skip_rest(value, prefix), ""))?;
        let Some(std) = std else {
            if !value.is_empty() {
                return Err(parse_error(
                    alayout,
                    avalue,
                    b"",
                    value,
                    &format!(": extra text: {}", quote(value)),
                ));
            }
            break;
        };
        layout = suffix;
        let hold = value;
        let mut range_err: Option<&str> = None;
        let mut ok = true;
        match std {
            Std::Year => {
                if value.len() < 2 {
                    ok = false;
                } else {
                    let p = &value[..2];
                    value = &value[2..];
                    match atoi(p) {
                        Some(y) => year = if y >= 69 { y + 1900 } else { y + 2000 },
                        None => ok = false,
                    }
                }
            }
            Std::LongYear => {
                if value.len() < 4 || !is_digit(value, 0) {
                    ok = false;
                } else {
                    let p = &value[..4];
                    value = &value[4..];
                    match atoi(p) {
                        Some(y) => year = y,
                        None => ok = false,
                    }
                }
            }
            Std::Month | Std::LongMonth => {
                let names: Vec<&str> = if std == Std::Month {
                    MONTHS.iter().map(|m| &m[..3]).collect()
                } else {
                    MONTHS.to_vec()
                };
                match lookup(&names, value) {
                    Some((m, rest)) => {
                        month = m + 1;
                        value = rest;
                    }
                    None => ok = false,
                }
            }
            Std::NumMonth | Std::ZeroMonth => match getnum(value, std == Std::ZeroMonth) {
                Some((m, rest)) => {
                    month = m;
                    value = rest;
                    if !(1..=12).contains(&m) {
                        range_err = Some("month");
                    }
                }
                None => ok = false,
            },
            Std::WeekDay | Std::LongWeekDay => {
                let names: Vec<&str> = if std == Std::WeekDay {
                    DAYS.iter().map(|d| &d[..3]).collect()
                } else {
                    DAYS.to_vec()
                };
                match lookup(&names, value) {
                    Some((_, rest)) => value = rest,
                    None => ok = false,
                }
            }
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay && value.first() == Some(&b' ') {
                    value = &value[1..];
                }
                match getnum(value, std == Std::ZeroDay) {
                    Some((d, rest)) => {
                        day = d;
                        value = rest;
                    }
                    None => ok = false,
                }
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                for _ in 0..2 {
                    if std == Std::UnderYearDay && value.first() == Some(&b' ') {
                        value = &value[1..];
                    }
                }
                match getnum3(value, std == Std::ZeroYearDay) {
                    Some((d, rest)) => {
                        yday = d;
                        value = rest;
                    }
                    None => ok = false,
                }
            }
            Std::Hour => match getnum(value, false) {
                Some((h, rest)) => {
                    hour = h;
                    value = rest;
                    if h >= 24 {
                        range_err = Some("hour");
                    }
                }
                None => ok = false,
            },
            Std::Hour12 | Std::ZeroHour12 => match getnum(value, std == Std::ZeroHour12) {
                Some((h, rest)) => {
                    hour = h;
                    value = rest;
                    if h > 12 {
                        range_err = Some("hour");
                    }
                }
                None => ok = false,
            },
            Std::Minute | Std::ZeroMinute => match getnum(value, std == Std::ZeroMinute) {
                Some((m, rest)) => {
                    min = m;
                    value = rest;
                    if m >= 60 {
                        range_err = Some("minute");
                    }
                }
                None => ok = false,
            },
            Std::Second | Std::ZeroSecond => match getnum(value, std == Std::ZeroSecond) {
                Some((s, rest)) => {
                    sec = s;
                    value = rest;
                    if s >= 60 {
                        range_err = Some("second");
                    } else if value.len() >= 2
                        && matches!(value[0], b'.' | b',')
                        && is_digit(value, 1)
                        && !matches!(
                            next_std_chunk(layout).1,
                            Some(Std::Frac0(_) | Std::Frac9(_))
                        )
                    {
                        // A fraction in the value the layout does not have.
                        let mut n = 2;
                        while is_digit(value, n) {
                            n += 1;
                        }
                        match parse_nanoseconds(value, n) {
                            Ok(ns) => nsec = ns,
                            Err(Some(r)) => range_err = Some(r),
                            Err(None) => ok = false,
                        }
                        value = &value[n..];
                    }
                }
                None => ok = false,
            },
            Std::PM | Std::Pm => {
                if value.len() < 2 {
                    ok = false;
                } else {
                    let p = &value[..2];
                    value = &value[2..];
                    match (std, p) {
                        (Std::PM, b"PM") | (Std::Pm, b"pm") => pm = true,
                        (Std::PM, b"AM") | (Std::Pm, b"am") => am = true,
                        _ => ok = false,
                    }
                }
            }
            Std::Iso8601TZ
            | Std::Iso8601ShortTZ
            | Std::Iso8601ColonTZ
            | Std::Iso8601SecondsTZ
            | Std::Iso8601ColonSecondsTZ
                if value.first() == Some(&b'Z') =>
            {
                value = &value[1..];
                utc = true;
            }
            Std::Iso8601TZ
            | Std::Iso8601ShortTZ
            | Std::Iso8601ColonTZ
            | Std::Iso8601SecondsTZ
            | Std::Iso8601ColonSecondsTZ
            | Std::NumTZ
            | Std::NumShortTZ
            | Std::NumColonTZ
            | Std::NumSecondsTz
            | Std::NumColonSecondsTZ => {
                // sign, hours, minutes, seconds and the length taken
                let fields: Option<(usize, usize, usize, usize)> = match std {
                    Std::Iso8601ColonTZ | Std::NumColonTZ => {
                        (value.len() >= 6 && value[3] == b':').then_some((1, 4, 0, 6))
                    }
                    Std::NumShortTZ | Std::Iso8601ShortTZ => {
                        (value.len() >= 3).then_some((1, 0, 0, 3))
                    }
                    Std::Iso8601ColonSecondsTZ | Std::NumColonSecondsTZ => {
                        (value.len() >= 9 && value[3] == b':' && value[6] == b':')
                            .then_some((1, 4, 7, 9))
                    }
                    Std::Iso8601SecondsTZ | Std::NumSecondsTz => {
                        (value.len() >= 7).then_some((1, 3, 5, 7))
                    }
                    _ => (value.len() >= 5).then_some((1, 3, 0, 5)),
                };
                match fields {
                    None => ok = false,
                    Some((h, m, s, len)) => {
                        let num = |at: usize| -> Option<i64> {
                            if at == 0 {
                                Some(0)
                            } else {
                                getnum(&value[at..at + 2], true).map(|(n, _)| n)
                            }
                        };
                        let sign = value[0];
                        let (hr, mm, ss) = match num(h) {
                            None => {
                                ok = false;
                                (0, 0, 0)
                            }
                            Some(hr) => match num(m) {
                                None => {
                                    ok = false;
                                    (hr, 0, 0)
                                }
                                Some(mm) => match num(s) {
                                    None => {
                                        ok = false;
                                        (hr, mm, 0)
                                    }
                                    Some(ss) => (hr, mm, ss),
                                },
                            },
                        };
                        value = &value[len..];
                        // `>`: offsets of 24 hours or 60 minutes are written.
                        if hr > 24 {
                            range_err = Some("time zone offset hour");
                        }
                        if mm > 60 {
                            range_err = Some("time zone offset minute");
                        }
                        if ss > 60 {
                            range_err = Some("time zone offset second");
                        }
                        zone_offset = (hr * 60 + mm) * 60 + ss;
                        match sign {
                            b'+' => {}
                            b'-' => zone_offset = -zone_offset,
                            _ => ok = false,
                        }
                    }
                }
            }
            Std::TZ => {
                if value.starts_with(b"UTC") {
                    utc = true;
                    value = &value[3..];
                } else {
                    match parse_time_zone(value) {
                        Some(n) => {
                            zone_name = &value[..n];
                            value = &value[n..];
                        }
                        None => ok = false,
                    }
                }
            }
            Std::Frac0(digits) => {
                let n = 1 + digits;
                if value.len() < n {
                    ok = false;
                } else {
                    match parse_nanoseconds(value, n) {
                        Ok(ns) => nsec = ns,
                        Err(Some(r)) => range_err = Some(r),
                        Err(None) => ok = false,
                    }
                    value = &value[n..];
                }
            }
            Std::Frac9(_) => {
                if value.len() >= 2 && matches!(value[0], b'.' | b',') && value[1].is_ascii_digit()
                {
                    // Any number of digits, as for a fraction after seconds.
                    let mut i = 0;
                    while i + 1 < value.len() && value[i + 1].is_ascii_digit() {
                        i += 1;
                    }
                    match parse_nanoseconds(value, 1 + i) {
                        Ok(ns) => nsec = ns,
                        Err(Some(r)) => range_err = Some(r),
                        Err(None) => ok = false,
                    }
                    value = &value[1 + i..];
                }
            }
        }
        if let Some(r) = range_err {
            return Err(parse_error(
                alayout,
                avalue,
                stdstr,
                value,
                &format!(": {r} out of range"),
            ));
        }
        if !ok {
            return Err(parse_error(alayout, avalue, stdstr, hold, ""));
        }
    }
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if yday >= 0 {
        let (mut m, mut d) = (0, 0);
        if is_leap(year) {
            if yday == 31 + 29 {
                m = 2;
                d = 29;
            } else if yday > 31 + 29 {
                yday -= 1;
            }
        }
        if !(1..=365).contains(&yday) {
            return Err(parse_error(
                alayout,
                avalue,
                b"",
                value,
                ": day-of-year out of range",
            ));
        }
        if m == 0 {
            m = (yday - 1) / 31 + 1;
            if days_before(m + 1) < yday {
                m += 1;
            }
            d = yday - days_before(m);
        }
        if month >= 0 && month != m {
            return Err(parse_error(
                alayout,
                avalue,
                b"",
                value,
                ": day-of-year does not match month",
            ));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(parse_error(
                alayout,
                avalue,
                b"",
                value,
                ": day-of-year does not match day",
            ));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(parse_error(
            alayout,
            avalue,
            b"",
            value,
            ": day out of range",
        ));
    }
    let wall = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec;
    let nanos = u32::try_from(nsec).unwrap_or(0);
    if utc {
        return Ok(Parsed::Utc(wall, nanos));
    }
    if zone_offset != -1 {
        // The local zone (UTC) has the offset only when it is 0 and no
        // other zone is named; otherwise Go makes a fixed zone.
        return Ok(if zone_offset == 0 && zone_name.is_empty() {
            Parsed::Utc(wall, nanos)
        } else {
            Parsed::OtherZone
        });
    }
    if !zone_name.is_empty() {
        return Ok(Parsed::OtherZone);
    }
    Ok(Parsed::Utc(wall, nanos))
}

/// `skip`: `value` less `prefix`, a run of spaces in `prefix` matching
/// any run of spaces (none included) in `value`.
fn skip<'a>(mut value: &'a [u8], mut prefix: &[u8]) -> Option<&'a [u8]> {
    while let Some(&p) = prefix.first() {
        if p == b' ' {
            if value.first().is_some_and(|&c| c != b' ') {
                return None;
            }
            prefix = trim_spaces(prefix);
            value = trim_spaces(value);
            continue;
        }
        if value.first() != Some(&p) {
            return None;
        }
        prefix = &prefix[1..];
        value = &value[1..];
    }
    Some(value)
}

/// What is left of `value` where [`skip`] fails (Go reports it).
fn skip_rest<'a>(mut value: &'a [u8], mut prefix: &[u8]) -> &'a [u8] {
    while let Some(&p) = prefix.first() {
        if p == b' ' {
            if value.first().is_some_and(|&c| c != b' ') {
                return value;
            }
            prefix = trim_spaces(prefix);
            value = trim_spaces(value);
            continue;
        }
        if value.first() != Some(&p) {
            return value;
        }
        prefix = &prefix[1..];
        value = &value[1..];
    }
    value
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == b' ').count();
    &s[n..]
}

/// `leadingFraction`: the leading digits as a fraction (precision stops
/// growing at overflow) and the scale.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let mut x: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if !overflow {
            if x > ((1 << 63) - 1) / 10 {
                overflow = true;
            } else {
                let y = x * 10 + u64::from(s[i] - b'0');
                if y > 1 << 63 {
                    overflow = true;
                } else {
                    x = y;
                    scale *= 10.0;
                }
            }
        }
        i += 1;
    }
    (x, scale, &s[i..])
}

/// A second, in nanoseconds.
pub(crate) const SECOND: i64 = 1_000_000_000;

fn unit(u: &[u8]) -> Option<u64> {
    Some(match u {
        b"ns" => 1,
        // `us`, U+00B5 micro sign, U+03BC Greek mu
        b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
        b"ms" => 1_000_000,
        b"s" => 1_000_000_000,
        b"m" => 60_000_000_000,
        b"h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// `time.ParseDuration`, in nanoseconds.
///
/// # Errors
/// Go's message (`time: invalid duration "x"`, ...).
pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    let orig = text.as_bytes();
    let invalid = || format!("time: invalid duration {}", quote(orig));
    let mut s = orig;
    let mut d: u64 = 0;
    let mut neg = false;
    if let Some(&c) = s.first() {
        if c == b'-' || c == b'+' {
            neg = c == b'-';
            s = &s[1..];
        }
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let Some((mut v, rest)) = leading_int(s) else {
            return Err(invalid());
        };
        s = rest;
        let pre = before != s.len();
        let (mut f, mut scale, mut post) = (0, 1.0, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let before = s.len();
            let (ff, sc, rest) = leading_fraction(s);
            (f, scale, s) = (ff, sc, rest);
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let i = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if i == 0 {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let u = &s[..i];
        s = &s[i..];
        let Some(unit) = unit(u) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                quote(u),
                quote(orig)
            ));
        };
        if v > (1 << 63) / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            // float64 keeps fractions of an hour exact to the nanosecond.
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            let frac = (f as f64 * (unit as f64 / scale)) as u64;
            v += frac;
            if v > 1 << 63 {
                return Err(invalid());
            }
        }
        // Go's uint64 sum wraps (two terms of 1<<63 make 0).
        d = d.wrapping_add(v);
        if d > 1 << 63 {
            return Err(invalid());
        }
    }
    #[allow(clippy::cast_possible_wrap)]
    let signed = d as i64;
    if neg {
        return Ok(signed.wrapping_neg());
    }
    if d > (1 << 63) - 1 {
        return Err(invalid());
    }
    Ok(signed)
}

/// `Duration.String`: `72h3m0.5s`, `1.5ms`, `0s`.
pub(crate) fn duration_string(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    // Built backwards, as Go does.
    let mut out: Vec<u8> = Vec::new();
    let push_rev = |out: &mut Vec<u8>, s: &str| out.extend(s.bytes().rev());
    if u < 1_000_000_000 {
        out.push(b's');
        let prec;
        if u == 0 {
            return "0s".into();
        } else if u < 1_000 {
            prec = 0;
            out.push(b'n');
        } else if u < 1_000_000 {
            prec = 3;
            push_rev(&mut out, "\u{b5}");
        } else {
            prec = 6;
            out.push(b'm');
        }
        u = fmt_frac(&mut out, u, prec);
        push_rev(&mut out, &u.to_string());
    } else {
        out.push(b's');
        u = fmt_frac(&mut out, u, 9);
        push_rev(&mut out, &(u % 60).to_string());
        u /= 60;
        if u > 0 {
            out.push(b'm');
            push_rev(&mut out, &(u % 60).to_string());
            u /= 60;
            // Hours at most: days differ in length.
            if u > 0 {
                out.push(b'h');
                push_rev(&mut out, &u.to_string());
            }
        }
    }
    if neg {
        out.push(b'-');
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `fmtFrac`: the fraction of `v / 10^prec` without trailing zeros (and no
/// point when it is 0), pushed backwards; returns the integer part.
fn fmt_frac(out: &mut Vec<u8>, mut v: u64, prec: u32) -> u64 {
    let mut printed = false;
    for _ in 0..prec {
        let digit = v % 10;
        printed = printed || digit != 0;
        if printed {
            out.push(b'0' + u8::try_from(digit).unwrap_or(0));
        }
        v /= 10;
    }
    if printed {
        out.push(b'.');
    }
    v
}

/// `Duration.Round(m)`: to the nearest multiple of `m`, halves away from
/// zero, saturating.
pub(crate) fn duration_round(d: i64, m: i64) -> i64 {
    if m <= 0 {
        return d;
    }
    let less_than_half =
        |x: i64| x.unsigned_abs().wrapping_add(x.unsigned_abs()) < m.unsigned_abs();
    let mut r = d % m;
    if d < 0 {
        r = -r;
        if less_than_half(r) {
            return d + r;
        }
        // Go's arithmetic wraps; a result on the wrong side is overflow.
        let d1 = d.wrapping_sub(m).wrapping_add(r);
        if d1 < d {
            d1
        } else {
            i64::MIN
        }
    } else {
        if less_than_half(r) {
            return d - r;
        }
        let d1 = d.wrapping_add(m).wrapping_sub(r);
        if d1 > d {
            d1
        } else {
            i64::MAX
        }
    }
}

#[cfg(test)]
#[path = "time_tests.rs"]
mod tests;

//! Tests of [`super`]: Go's `time` parsing, formatting and durations.

use super::*;

// Values below are what helm v3.17.1 printed for `toDate LAYOUT VALUE`,
// `mustToDate`, `mustDateModify D (toDate "2006" "2020")` and
// `duration S` in a chart's template (TZ empty, so Local is UTC).

fn utc(layout: &str, value: &str) -> (i64, u32) {
    match parse(layout, value) {
        Ok(Parsed::Utc(s, n)) => (s, n),
        other => panic!("{layout} {value}: {other:?}"),
    }
}

#[test]
fn parses_as_go_parses() {
    // 2024-02-29 00:00:00 +0000 UTC
    assert_eq!(utc("2006-01-02", "2024-02-29"), (1_709_164_800, 0));
    // 2024-02-29 13:14:15.123 +0000 UTC
    assert_eq!(
        utc("2006-01-02 15:04:05.000", "2024-02-29 13:14:15.123"),
        (1_709_212_455, 123_000_000)
    );
    // "Z" and "+00:00" are UTC
    assert_eq!(
        utc("2006-01-02T15:04:05Z07:00", "2024-02-29T13:14:15+00:00"),
        (1_709_212_455, 0)
    );
    // 12:01am, a lower-case month and a padded day: 1999-02-03 00:01
    assert_eq!(
        utc("Jan _2 2006 3:04PM", "feb  3 1999 12:01AM").0,
        918_000_060
    );
    // two-digit years from 69 are 19xx: 2068-12-31
    assert_eq!(utc("02/01/06", "31/12/68").0, 3_124_137_600);
    // day 60 of a leap year: 2024-02-29
    assert_eq!(utc("2006 002", "2024 060").0, 1_709_164_800);
    // a fraction after the seconds the layout lacks, cut to nanoseconds
    assert_eq!(
        utc("2006-01-02 15:04:05", "2024-01-01 10:00:00.987654321123"),
        (1_704_103_200, 987_654_321)
    );
    // the weekday is checked, not used: 2010-01-01
    assert_eq!(utc("Monday 2006", "tuesday 2010").0, 1_262_304_000);
    // year 0: 0000-01-01 23:59:00; 9999-12-31 is 253402214400
    assert_eq!(utc("15:04", "23:59").0, -62_167_219_200 + 86_340);
    assert_eq!(utc("2006-01-02", "9999-12-31").0, 253_402_214_400);
    // `06` of "+1" is 2001
    assert_eq!(utc("06", "+1").0, 978_307_200);
    assert_eq!(
        parse("2006-01-02 -0700", "2024-01-01 +0100"),
        Ok(Parsed::OtherZone)
    );
    assert_eq!(
        parse("2006-01-02 MST", "2024-01-01 CET"),
        Ok(Parsed::OtherZone)
    );
    assert_eq!(utc("2006-01-02 -0700", "2024-01-01 -0000").0, 1_704_067_200);
}

#[test]
fn parse_errors_are_gos() {
    for (layout, value, want) in [
        (
            "2006-01-02",
            "2024-02-30",
            r#"parsing time "2024-02-30": day out of range"#,
        ),
        (
            "2006-01-02",
            "2024-13-01",
            r#"parsing time "2024-13-01": month out of range"#,
        ),
        (
            "2006-01-02",
            "24-01-01",
            r#"parsing time "24-01-01" as "2006-01-02": cannot parse "24-01-01" as "2006""#,
        ),
        (
            "2006-01-02",
            "2024-01-01x",
            r#"parsing time "2024-01-01x": extra text: "x""#,
        ),
        (
            "2006-01-02 15:04",
            "2024-01-01 25:00",
            r#"parsing time "2024-01-01 25:00": hour out of range"#,
        ),
        (
            "Jan 2006",
            "Foo 2024",
            r#"parsing time "Foo 2024" as "Jan 2006": cannot parse "Foo 2024" as "Jan""#,
        ),
        (
            "2006-01-02",
            "2024-01-01\t",
            r#"parsing time "2024-01-01\x09": extra text: "\x09""#,
        ),
        (
            "2006 002",
            "2023 366",
            r#"parsing time "2023 366": day-of-year out of range"#,
        ),
        (
            "Jan 2 2006 002",
            "Feb 3 2024 033",
            r#"parsing time "Feb 3 2024 033": day-of-year does not match day"#,
        ),
        (
            "15:04:05.000",
            "10:00:00.12",
            r#"parsing time "10:00:00.12" as "15:04:05.000": cannot parse ".12" as ".000""#,
        ),
        (
            "2006-01-02",
            "2024-01-\u{2603}1",
            r#"parsing time "2024-01-\xe2\x98\x831" as "2006-01-02": cannot parse "\xe2\x98\x831" as "02""#,
        ),
        (
            "2006-01-02 15:04:05 -07:00:00",
            "2024-01-01 00:00:00 +01:00:61",
            r#"parsing time "2024-01-01 00:00:00 +01:00:61": time zone offset second out of range"#,
        ),
        (
            "_2 Jan",
            "31 Feb",
            r#"parsing time "31 Feb": day out of range"#,
        ),
        (
            "Jan _2 2006 3:04PM",
            "feb  3 1999 12:01am",
            r#"parsing time "feb  3 1999 12:01am" as "Jan _2 2006 3:04PM": cannot parse "am" as "PM""#,
        ),
    ] {
        assert_eq!(
            parse(layout, value),
            Err(want.to_string()),
            "{layout} {value}"
        );
    }
}

#[test]
fn durations_parse_as_go_parses_them() {
    let h = 3_600 * SECOND;
    assert_eq!(parse_duration("2h10m5s"), Ok(2 * h + 605 * SECOND));
    assert_eq!(parse_duration("-1.5h"), Ok(-h * 3 / 2));
    assert_eq!(parse_duration("+.5m"), Ok(30 * SECOND));
    assert_eq!(parse_duration("-0"), Ok(0));
    assert_eq!(parse_duration("1ns1ns1ns"), Ok(3));
    assert_eq!(parse_duration("1\u{3bc}s"), Ok(1_000));
    assert_eq!(parse_duration("1\u{b5}s"), Ok(1_000));
    // 2020-01-01 01:00:00.00000036 and 00:19:59.999999999 (float64)
    assert_eq!(parse_duration("1.0000000001h"), Ok(h + 360));
    assert_eq!(parse_duration("0.3333333333333h"), Ok(1_199_999_999_999));
    assert_eq!(parse_duration("2562047h47m16.854775807s"), Ok(i64::MAX));
    // two halves of 2^64 wrap to 0, as Go's uint64 sum does
    assert_eq!(
        parse_duration("9223372036854775808ns9223372036854775808ns"),
        Ok(0)
    );
    assert_eq!(parse_duration("-9223372036854775808ns"), Ok(i64::MIN));
    for (text, want) in [
        ("1d", r#"time: unknown unit "d" in duration "1d""#),
        ("", r#"time: invalid duration """#),
        ("1", r#"time: missing unit in duration "1""#),
        (".h", r#"time: invalid duration ".h""#),
        ("9999999999h", r#"time: invalid duration "9999999999h""#),
        ("1h-1m", r#"time: unknown unit "h-" in duration "1h-1m""#),
        (
            "1\u{2603}",
            r#"time: unknown unit "\xe2\x98\x83" in duration "1\xe2\x98\x83""#,
        ),
        (
            "2562047h47m16.854775808s",
            r#"time: invalid duration "2562047h47m16.854775808s""#,
        ),
    ] {
        assert_eq!(parse_duration(text), Err(want.to_string()), "{text}");
    }
}

#[test]
fn durations_print_as_go_prints_them() {
    // `duration S` wraps S * 1e9 as Go's int64 does: "20211507185753197"
    // printed 512ns, and so on.
    for (d, want) in [
        (0, "0s"),
        (512, "512ns"),
        (1_024, "1.024\u{b5}s"),
        (512_000, "512\u{b5}s"),
        (1_024_000_000, "1.024s"),
        (-512, "-512ns"),
        (95 * SECOND, "1m35s"),
        (3_601 * SECOND, "1h0m1s"),
        (2_929_687 * SECOND, "813h48m7s"),
        (9_223_372_036 * SECOND, "2562047h47m16s"),
        (i64::MIN, "-2562047h47m16.854775808s"),
    ] {
        assert_eq!(duration_string(d), want, "{d}");
    }
}

#[test]
fn durations_round_as_go_rounds_them() {
    assert_eq!(duration_round(1_500_000_000, SECOND), 2 * SECOND);
    assert_eq!(duration_round(1_499_999_999, SECOND), SECOND);
    assert_eq!(duration_round(-1_500_000_000, SECOND), -2 * SECOND);
    assert_eq!(duration_round(i64::MAX, SECOND), i64::MAX);
    assert_eq!(duration_round(i64::MIN, SECOND), i64::MIN);
    assert_eq!(duration_round(7, 0), 7);
}

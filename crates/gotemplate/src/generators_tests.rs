//! Tests of [`super`]: the seeded random and clock functions and their variants.

use super::{civil, format_time, Generator, Instant, Variant, V};

fn first() -> Instant {
    Variant::First.clock()
}

#[test]
fn the_clock_formats_as_go_formats_it() {
    // Go: time.Unix(1931267366, 535897932).UTC().Format(...)
    let t = first();
    let f = |l: &str| format_time(l, t).expect("formats");
    assert_eq!(f("2006-01-02T15:04:05Z07:00"), "2031-03-14T15:09:26Z");
    assert_eq!(f("20060102150405"), "20310314150926");
    assert_eq!(
        f("Mon Jan _2 15:04:05 MST 2006"),
        "Fri Mar 14 15:09:26 UTC 2031"
    );
    assert_eq!(
        f("Monday, 02-Jan-06 3:04PM -0700"),
        "Friday, 14-Mar-31 3:09PM +0000"
    );
    assert_eq!(f("2006-01-02 15:04:05.000"), "2031-03-14 15:09:26.535");
    assert_eq!(
        f(".999999999|,999|002|__2|pm"),
        ".535897932|,535|073| 73|pm"
    );
    // `Jan` followed by a lower-case letter is literal text.
    assert_eq!(f("Janx"), "Janx");
    assert_eq!(
        format_time("2006-01-02 15:04:05.999 MST", Instant { secs: 0, nanos: 0 }),
        Ok("1970-01-01 00:00:00 UTC".to_string())
    );
}

#[test]
fn the_two_clocks_differ_in_every_field_a_layout_prints() {
    let (a, b) = (Variant::First.clock(), Variant::Second.clock());
    for layout in [
        "2006",
        "06",
        "1",
        "Jan",
        "2",
        "Mon",
        "15",
        "3",
        "PM",
        "4",
        "5",
        ".0",
        ".000000000",
        "002",
    ] {
        let (x, y) = (format_time(layout, a), format_time(layout, b));
        assert_ne!(x, y, "{layout}");
    }
    assert_eq!(civil(0), (1970, 1, 1, 1, 4));
    assert_eq!(civil(19_782), (2024, 2, 29, 60, 4));
}

#[test]
fn the_second_variant_differs_wherever_a_result_can() {
    let call = |v: Variant, name: &str, args: &[V]| {
        Generator::new("t", v)
            .call(name, args, 1 << 20)
            .expect("known")
            .expect("evaluates")
    };
    for (name, args) in [
        ("randAlphaNum", vec![V::Int(1)]),
        ("randNumeric", vec![V::Int(3)]),
        ("randAscii", vec![V::Int(8)]),
        ("uuidv4", vec![]),
        ("shuffle", vec![V::Str("abc".into())]),
        ("randBytes", vec![V::Int(4)]),
        ("randInt", vec![V::Int(1), V::Int(3)]),
    ] {
        let (a, b) = (
            call(Variant::First, name, &args),
            call(Variant::Second, name, &args),
        );
        assert_ne!(a, b, "{name}");
        assert_eq!(
            a,
            call(Variant::First, name, &args),
            "{name} is reproducible"
        );
    }
    // Nothing to choose: the same result.
    for (name, args) in [
        ("randInt", vec![V::Int(1), V::Int(2)]),
        ("shuffle", vec![V::Str("aaa".into())]),
        ("date", vec![V::Str("2006".into()), V::Int(0)]),
    ] {
        assert_eq!(
            call(Variant::First, name, &args),
            call(Variant::Second, name, &args),
            "{name}"
        );
    }
    let g = Generator::new("t", Variant::First);
    let _ = g.call("date", &[V::Str("2006".into()), V::Int(0)], 100);
    assert!(!g.used(), "a date given in seconds draws nothing");
    let _ = g.call("randAlpha", &[V::Int(1)], 100);
    assert!(g.used());
}

#[test]
fn date_functions_give_what_helm_gives() {
    // helm v3.17.1, a chart's template printing each call (TZ empty).
    let g = Generator::new("t", Variant::First);
    let call = |name: &str, args: &[V]| g.call(name, args, 1 << 20).expect("known");
    let st = |x: &str| V::Str(x.into());
    let printed = |v: Result<V, String>| match v.expect("evaluates") {
        V::Host(h) => h.0.printed(),
        other => other.go_string(),
    };
    let date = |layout: &str, value: &str| call("toDate", &[st(layout), st(value)]);
    assert_eq!(
        printed(date("2006-01-02", "2024-02-29")),
        "2024-02-29 00:00:00 +0000 UTC"
    );
    // what does not parse is the zero time
    assert_eq!(
        printed(date("2006-01-02", "2024-02-30")),
        "0001-01-01 00:00:00 +0000 UTC"
    );
    let ten = || date("2006-01-02 15:04", "2024-01-01 10:00").expect("toDate");
    assert_eq!(
        printed(call("dateModify", &[st("+90m"), ten()])),
        "2024-01-01 11:30:00 +0000 UTC"
    );
    assert_eq!(
        printed(call("date_modify", &[st("-999ns"), ten()])),
        "2024-01-01 09:59:59.999999001 +0000 UTC"
    );
    // a duration that does not parse leaves the time as it is
    assert_eq!(
        printed(call("dateModify", &[st("bogus"), ten()])),
        "2024-01-01 10:00:00 +0000 UTC"
    );
    assert_eq!(
        call("mustDateModify", &[st("1d"), ten()]),
        Err(r#"time: unknown unit "d" in duration "1d""#.to_string())
    );
    assert_eq!(
        call("mustToDate", &[st("2006-01-02"), st("2024-13-01")]),
        Err(r#"parsing time "2024-13-01": month out of range"#.to_string())
    );
    assert_eq!(
        call(
            "dateInZone",
            &[st("2006-01-02T15:04:05Z07:00"), ten(), st("UTC")]
        ),
        Ok(st("2024-01-01T10:00:00Z"))
    );
    assert!(
        call("toDate", &[st("2006-01-02 -0700"), st("2024-01-01 +0100")])
            .expect_err("zone")
            .contains("not supported by gitops-lint")
    );
    for (d, want) in [
        ("2h10m5s", "2h"),
        ("-49h", "2d"),
        ("8760h", "12mo"),
        ("8761h", "1y"),
        ("721h", "1mo"),
        ("1s", "0s"),
        ("1.5s", "1s"),
        ("61m", "1h"),
        ("nope", "0s"),
    ] {
        assert_eq!(call("durationRound", &[st(d)]), Ok(st(want)), "{d}");
    }
    assert_eq!(call("durationRound", &[V::Int(5)]), Ok(st("0s")));
    assert_eq!(call("durationRound", &[V::Float(3.5)]), Ok(st("0s")));
    for (secs, want) in [
        ("95", "1m35s"),
        ("-1", "-1s"),
        ("x", "0s"),
        ("+7", "7s"),
        // ParseInt's range error keeps MaxInt64, whose seconds wrap
        ("99999999999999999999", "-1s"),
    ] {
        assert_eq!(call("duration", &[st(secs)]), Ok(st(want)), "{secs}");
    }
    assert_eq!(call("duration", &[V::Float(1.5)]), Ok(st("0s")));
    // helm v3.17.1 (`duration 95`, `duration (add 95 0)`, `duration
    // .Values.n` with `--set n=-42`; `durationRound 5000000000`,
    // `durationRound (mul 5000000000 1)`, `--set big=7200000000000`)
    // printed `0s 1m35s -42s 0s 5s 2h`: an `int` is no `int64` to Sprig.
    assert_eq!(call("duration", &[V::Int(95)]), Ok(st("0s")));
    assert_eq!(call("duration", &[V::Int64(95)]), Ok(st("1m35s")));
    assert_eq!(call("duration", &[V::Int64(-42)]), Ok(st("-42s")));
    assert_eq!(
        call("durationRound", &[V::Int(5_000_000_000)]),
        Ok(st("0s"))
    );
    assert_eq!(
        call("durationRound", &[V::Int64(5_000_000_000)]),
        Ok(st("5s"))
    );
    assert_eq!(
        call("durationRound", &[V::Int64(7_200_000_000_000)]),
        Ok(st("2h"))
    );
    assert!(!g.used(), "none of these reads the clock");
    // `ago now` and `dateModify "-2h" now | ago`: 0s and 2h0m0s
    let now = call("now", &[]).expect("now");
    assert_eq!(call("ago", std::slice::from_ref(&now)), Ok(st("0s")));
    let before = call("dateModify", &[st("-2h"), now.clone()]).expect("modify");
    // The monotonic reading is gitops-lint's own (`now` reads 1ns).
    assert_eq!(
        printed(Ok(before.clone())).split(" m=").nth(1),
        Some("-7199.999999999")
    );
    assert_eq!(call("ago", std::slice::from_ref(&before)), Ok(st("2h0m0s")));
    assert_eq!(call("durationRound", &[before]), Ok(st("2h")));
    assert_eq!(call("durationRound", &[now]), Ok(st("0s")));
    assert!(g.used());
}

#[test]
fn shapes_are_sprigs() {
    let g = Generator::new("t", Variant::First);
    let call = |name: &str, args: &[V]| g.call(name, args, 1 << 20).expect("known");
    let V::Str(u) = call("uuidv4", &[]).expect("uuid") else {
        panic!()
    };
    assert_eq!((u.len(), &u[14..15]), (36, "4"));
    assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    let V::Str(h) =
        call("htpasswd", &[V::Str("admin".into()), V::Str("pw".into())]).expect("htpasswd")
    else {
        panic!()
    };
    assert!(h.starts_with("admin:$2a$10$") && h.len() == 6 + 60, "{h}");
    assert_eq!(
        call("htpasswd", &[V::Str("a:b".into()), V::Str("pw".into())]),
        Ok(V::Str("invalid username: a:b".into()))
    );
    let ca = call("genCA", &[V::Str("ca".into()), V::Int(365)]).expect("genCA");
    let V::Host(h) = &ca else { panic!() };
    let Some(V::Str(cert)) = h.0.field("Cert") else {
        panic!()
    };
    assert!(
        cert.starts_with("-----BEGIN CERTIFICATE-----\nZ2l0b3BzLWxpbnQ6IGdlbmVyYXRlZCBvZmZsaW5l"),
        "{cert}"
    );
    assert!(cert.ends_with("-----END CERTIFICATE-----\n"));
    assert!(cert
        .lines()
        .all(|l| l.len() <= 64 || l.starts_with("-----")));
    let signed = call(
        "genSignedCert",
        &[
            V::Str("svc".into()),
            V::Nil,
            V::List(vec![V::Str("svc.ns".into())]),
            V::Int(365),
            ca,
        ],
    );
    assert!(signed.is_ok(), "{signed:?}");
    assert_eq!(
        call(
            "genSelfSignedCert",
            &[
                V::Str("x".into()),
                V::List(vec![V::Str("1.2.3".into())]),
                V::Nil,
                V::Int(1)
            ]
        ),
        Err("error parsing ip: 1.2.3".to_string())
    );
    assert_eq!(
        call(
            "genSignedCert",
            &[
                V::Str("x".into()),
                V::Nil,
                V::Nil,
                V::Int(1),
                V::Str("pem".into())
            ]
        ),
        Err("wrong type for value; expected sprig.certificate; got string".to_string())
    );
    assert_eq!(
        call("genPrivateKey", &[V::Str("x".into())]),
        Ok(V::Str("Unknown type x".into()))
    );
    assert!(call(
        "dateInZone",
        &[
            V::Str("2006".into()),
            V::Int(0),
            V::Str("Europe/Paris".into())
        ]
    )
    .expect_err("zone")
    .contains("not supported by gitops-lint"));
    assert_eq!(
        call("randAlphaNum", &[V::Int(-1)]),
        Ok(V::Str(String::new()))
    );
    assert_eq!(
        call("randInt", &[V::Int(2), V::Int(2)]),
        Err("invalid argument to Intn".to_string())
    );
}

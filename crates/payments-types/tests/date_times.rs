//! The models write date-times through the module generated beside them (`rfc3339`), not
//! chrono's `Serialize`: the text must be chrono's, byte for byte, for every instant — each
//! fraction length, the years at the edges, those chrono writes itself (outside 0–9999, leap
//! seconds) — and `None` must stay `null`.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use payments_types::Webhook;
use serde_json::json;

/// A model holding `instant` in a field and in an optional one, as JSON.
fn written(instant: DateTime<Utc>, optional: Option<DateTime<Utc>>) -> serde_json::Value {
    let webhook: Webhook = serde_json::from_value(json!({
        "created": instant, "data": {}, "endpoint_id": uuid::Uuid::nil(), "event": "ping",
        "id": uuid::Uuid::nil(), "next_attempt": optional, "response_code": null, "retry_count": 0,
        "status": "pending",
    }))
    .unwrap();
    serde_json::to_value(&webhook).unwrap()
}

fn check(instant: DateTime<Utc>) {
    let chrono = serde_json::to_value(instant).unwrap();
    let model = written(instant, Some(instant));
    assert_eq!(model["created"], chrono, "{instant:?}");
    assert_eq!(model["next_attempt"], chrono, "{instant:?}");
}

#[test]
fn date_times_are_written_as_chrono_writes_them() {
    let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let at = |date: NaiveDate, h, min, s, nano| Utc.from_utc_datetime(&date.and_hms_nano_opt(h, min, s, nano).unwrap());
    for nanos in [0, 1, 7, 999, 1_000, 550_000, 1_000_000, 550_000_000, 123_456_789, 999_999_999, 100_000_010] {
        check(at(day(2026, 11, 29), 19, 18, 8, nanos));
    }
    for date in [day(0, 1, 1), day(1, 2, 3), day(999, 12, 31), day(1970, 1, 1), day(2024, 2, 29), day(9999, 12, 31)] {
        check(at(date, 0, 0, 0, 0));
        check(at(date, 23, 59, 59, 5_000));
    }
    // chrono's own: years it writes with a sign or five digits, and a leap second.
    check(at(day(10_000, 1, 1), 0, 0, 0, 0));
    check(at(day(-1, 6, 15), 12, 0, 0, 0));
    check(at(day(2016, 12, 31), 23, 59, 59, 1_500_000_000));
    // Instants across the whole range, a second and a fraction apart in a pattern.
    let mut seconds = -62_000_000_000_i64;
    while seconds < 253_000_000_000 {
        let nanos = (seconds.unsigned_abs() % 1_000_000_007) as u32 % 1_000_000_000;
        check(DateTime::from_timestamp(seconds, nanos).unwrap());
        check(DateTime::from_timestamp(seconds, nanos / 1_000 * 1_000).unwrap());
        check(DateTime::from_timestamp(seconds, nanos / 1_000_000 * 1_000_000).unwrap());
        seconds += 1_234_567_891;
    }
    assert_eq!(written(at(day(2026, 1, 1), 0, 0, 0, 0), None)["next_attempt"], serde_json::Value::Null);
}

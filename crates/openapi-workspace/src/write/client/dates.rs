//! Date-times written without `core::fmt`: each model field of type `DateTime<Utc>` (or an
//! `Option` of one) is serialized by a module written beside the models, which writes the text
//! chrono writes digit by digit. chrono's own goes through `Display` and serde's `collect_str`,
//! and was most of a small model's serialization (instructions per request, BENCHMARKS.md).

use quote::ToTokens;

/// The module the fields name, written once into the models' file.
const MODULE: &str = r#"
/// Date-times as chrono writes them (RFC 3339 in UTC with `Z`, a fraction of a second only as
/// long as it needs: milli-, micro- or nanoseconds), written digit by digit rather than through
/// `core::fmt`. Years outside 0–9999 and leap seconds are written by chrono itself. (A build
/// whose features leave out every model with a date-time leaves it unused.)
#[allow(dead_code)]
mod rfc3339 {
    use ::chrono::{Datelike, Timelike};

    type UtcDateTime = ::chrono::DateTime<::chrono::offset::Utc>;

    pub(super) fn date_time<S: ::serde::Serializer>(value: &UtcDateTime, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
        let (date, time) = (value.date_naive(), value.time());
        let nanos = time.nanosecond();
        if !(0..=9999).contains(&date.year()) || nanos >= 1_000_000_000 {
            return ::serde::Serialize::serialize(value, serializer);
        }
        let mut out = [0u8; 30];
        let mut at = 0;
        let date_and_time = [
            (date.year() as u32, 4, b'-'),
            (date.month(), 2, b'-'),
            (date.day(), 2, b'T'),
            (time.hour(), 2, b':'),
            (time.minute(), 2, b':'),
        ];
        for (number, width, after) in date_and_time {
            digits(&mut out, &mut at, number, width);
            out[at] = after;
            at += 1;
        }
        digits(&mut out, &mut at, time.second(), 2);
        if nanos != 0 {
            out[at] = b'.';
            at += 1;
            let (fraction, width) = match (nanos % 1_000_000, nanos % 1_000) {
                (0, _) => (nanos / 1_000_000, 3),
                (_, 0) => (nanos / 1_000, 6),
                _ => (nanos, 9),
            };
            digits(&mut out, &mut at, fraction, width);
        }
        out[at] = b'Z';
        match ::std::str::from_utf8(&out[..=at]) {
            Ok(text) => serializer.serialize_str(text),
            Err(_) => ::serde::Serialize::serialize(value, serializer),
        }
    }

    /// `number`'s last `width` digits at `out[*at..]`.
    fn digits(out: &mut [u8], at: &mut usize, mut number: u32, width: usize) {
        for i in (0..width).rev() {
            out[*at + i] = b'0' + (number % 10) as u8;
            number /= 10;
        }
        *at += width;
    }

    pub(super) fn optional_date_time<S: ::serde::Serializer>(
        value: &::std::option::Option<UtcDateTime>,
        serializer: S,
    ) -> ::std::result::Result<S::Ok, S::Error> {
        struct Written<'a>(&'a UtcDateTime);
        impl ::serde::Serialize for Written<'_> {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                date_time(self.0, serializer)
            }
        }
        match value {
            Some(value) => serializer.serialize_some(&Written(value)),
            None => serializer.serialize_none(),
        }
    }
}
"#;

const DATE_TIME: &str = "::chrono::DateTime<::chrono::offset::Utc>";

/// Gives every date-time field of the models the module's serializer, and the file the module
/// when a field names it.
pub(super) fn written_directly(file: &mut syn::File) -> crate::error::Result<()> {
    let mut named = false;
    for item in &mut file.items {
        let syn::Item::Struct(item) = item else { continue };
        for field in item.fields.iter_mut() {
            let ty = field.ty.to_token_stream().to_string().replace(' ', "");
            let with = if ty == DATE_TIME {
                "rfc3339::date_time"
            } else if ty == format!("::std::option::Option<{DATE_TIME}>") {
                "rfc3339::optional_date_time"
            } else {
                continue;
            };
            field.attrs.push(syn::parse_quote!(#[serde(serialize_with = #with)]));
            named = true;
        }
    }
    if named {
        let module: syn::File =
            syn::parse_str(MODULE).map_err(|e| crate::error::Error::unparsable("the date-time module", e))?;
        file.items.extend(module.items);
    }
    Ok(())
}

//! How a log line is written: the layout of tracing-subscriber's `Full` text format and of its
//! JSON format (flattened event, current span), written directly into the line's buffer, without
//! colours.
//!
//! Why not tracing-subscriber's own formatters: every request writes a line, and theirs cost a
//! request more than its handler (`GET /currencies`): the timestamp is formatted whole through
//! `Display` each time, each text field goes through `Debug`, and the JSON one through a serde
//! serializer over an adaptor, a write call per fragment. Here the date and time up to the
//! second are formatted once a second per thread, and fields are copied, escaped only where
//! they need it; integers are written by `itoa`, not `core::fmt` (instructions per request,
//! BENCHMARKS.md).

use std::cell::RefCell;
use std::fmt::{self, Write};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// One of the two layouts, for `tracing_subscriber::fmt().event_format(..)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-11-25T14:44:03.492034Z  INFO span{a=1}: target: message b=2 c="text"`, for people.
    Text,
    /// `{"timestamp":"…","level":"INFO","message":"…","b":2,"target":"…","span":{…}}`, one
    /// object per line, for log collectors (the span's fields as the layer's `JsonFields` wrote
    /// them).
    Json,
}

impl<S, N> FormatEvent<S, N> for LogFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let meta = event.metadata();
        match self {
            Self::Text => {
                timestamp(&mut writer)?;
                writer.write_char(' ')?;
                level_text(&mut writer, *meta.level())?;
                writer.write_char(' ')?;
                if let Some(scope) = ctx.event_scope() {
                    let mut any = false;
                    for span in scope.from_root() {
                        writer.write_str(span.metadata().name())?;
                        if let Some(fields) = span.extensions().get::<FormattedFields<N>>()
                            && !fields.is_empty()
                        {
                            write!(writer, "{{{fields}}}")?;
                        }
                        writer.write_char(':')?;
                        any = true;
                    }
                    if any {
                        writer.write_char(' ')?;
                    }
                }
                writer.write_str(meta.target())?;
                writer.write_str(": ")?;
                let mut fields = TextFields { out: &mut writer, result: Ok(()), first: true };
                event.record(&mut fields);
                fields.result?;
            }
            Self::Json => {
                writer.write_str("{\"timestamp\":\"")?;
                timestamp(&mut writer)?;
                writer.write_str("\",\"level\":\"")?;
                writer.write_str(meta.level().as_str())?;
                writer.write_char('"')?;
                let mut fields = JsonFields { out: &mut writer, result: Ok(()) };
                event.record(&mut fields);
                fields.result?;
                writer.write_str(",\"target\":")?;
                json_string(&mut writer, meta.target())?;
                let current = event.parent().and_then(|id| ctx.span(id)).or_else(|| ctx.lookup_current());
                if let Some(span) = current {
                    writer.write_str(",\"span\":{")?;
                    // `JsonFields` wrote the span's fields as one object: its members go in
                    // beside the name.
                    if let Some(fields) = span.extensions().get::<FormattedFields<N>>() {
                        let members = fields.trim().trim_start_matches('{').trim_end_matches('}');
                        if !members.is_empty() {
                            writer.write_str(members)?;
                            writer.write_char(',')?;
                        }
                    }
                    writer.write_str("\"name\":")?;
                    json_string(&mut writer, span.metadata().name())?;
                    writer.write_char('}')?;
                }
                writer.write_char('}')?;
            }
        }
        writer.write_char('\n')
    }
}

fn level_text(out: &mut Writer<'_>, level: Level) -> fmt::Result {
    out.write_str(match level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        Level::ERROR => "ERROR",
    })
}

/// The time now as RFC 3339 in UTC with microseconds: `2026-11-25T14:44:03.492034Z`. The part
/// up to the second is formatted once per second per thread.
fn timestamp(out: &mut Writer<'_>) -> fmt::Result {
    thread_local! {
        static SECOND: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
    }
    let now = chrono::Utc::now();
    let second = now.timestamp();
    SECOND.with_borrow_mut(|(cached, text)| {
        if *cached != second {
            text.clear();
            write!(text, "{}", now.format("%Y-%m-%dT%H:%M:%S"))?;
            *cached = second;
        }
        out.write_str(text)
    })?;
    let mut micros = now.timestamp_subsec_micros().min(999_999);
    let mut digits = [b'0'; 6];
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    out.write_char('.')?;
    out.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)?;
    out.write_char('Z')
}

/// `text` quoted as `Debug` quotes it: copied as it is where it holds only printable ASCII
/// other than `"` and `\` (a request's id, method and path, nearly always).
fn debug_string(out: &mut Writer<'_>, text: &str) -> fmt::Result {
    if text.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') {
        out.write_char('"')?;
        out.write_str(text)?;
        out.write_char('"')
    } else {
        write!(out, "{text:?}")
    }
}

/// Fields as `message name=value …`: the message as it is, text quoted and escaped as `Debug`
/// does, numbers and booleans bare.
struct TextFields<'a, 'w> {
    out: &'a mut Writer<'w>,
    result: fmt::Result,
    first: bool,
}

impl TextFields<'_, '_> {
    fn field(&mut self, field: &Field, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        self.result = (|| {
            let name = field.name();
            if name == "message" {
                if !self.first {
                    self.out.write_char(' ')?;
                }
            } else {
                if !self.first {
                    self.out.write_char(' ')?;
                }
                self.out.write_str(name.strip_prefix("r#").unwrap_or(name))?;
                self.out.write_char('=')?;
            }
            self.first = false;
            value(self.out)
        })();
    }
}

impl Visit for TextFields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let message = field.name() == "message";
        self.field(field, |out| if message { out.write_str(value) } else { debug_string(out, value) });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |out| out.write_str(if value { "true" } else { "false" }));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field, |out| write!(out, "{value:?}"));
    }
}

/// Fields as `,"name":value` members: text and anything formatted as JSON strings, numbers and
/// booleans bare.
struct JsonFields<'a, 'w> {
    out: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl JsonFields<'_, '_> {
    fn field(&mut self, field: &Field, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        self.result = (|| {
            self.out.write_char(',')?;
            let name = field.name();
            json_string(self.out, name.strip_prefix("r#").unwrap_or(name))?;
            self.out.write_char(':')?;
            value(self.out)
        })();
    }
}

impl Visit for JsonFields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, |out| json_string(out, value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.field(field, |out| out.write_str(itoa::Buffer::new().format(value)));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.field(field, |out| out.write_str(if value { "true" } else { "false" }));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field, |out| json_string(out, &format!("{value:?}")));
    }
}

/// `text` as a JSON string: quoted, with `"`, `\` and control characters escaped.
fn json_string(out: &mut impl Write, text: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if c.is_control() => "",
            _ => continue,
        };
        out.write_str(&text[plain..at])?;
        if escaped.is_empty() {
            write!(out, "\\u{:04x}", u32::from(c))?;
        } else {
            out.write_str(escaped)?;
        }
        plain = at + c.len_utf8();
    }
    out.write_str(&text[plain..])?;
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{LogFormat, debug_string, json_string};

    /// What `log` writes under a subscriber with `format`.
    fn written(format: LogFormat, log: impl FnOnce()) -> String {
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        let make = move || Sink(sink.clone());
        let builder = tracing_subscriber::fmt().with_writer(make).with_ansi(false).event_format(format);
        match format {
            LogFormat::Text => tracing::subscriber::with_default(builder.finish(), log),
            LogFormat::Json => tracing::subscriber::with_default(
                builder.fmt_fields(tracing_subscriber::fmt::format::JsonFields::new()).finish(),
                log,
            ),
        }
        String::from_utf8(out.lock().unwrap().clone()).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn log() {
        let span = tracing::info_span!("delivery", endpoint = 7);
        let _entered = span.enter();
        tracing::warn!(id = "a \"b\"", status = 200_u64, ok = true, reason = ?Some(3), "a message");
    }

    #[test]
    fn text_lines_have_tracing_subscribers_layout() {
        let line = written(LogFormat::Text, log);
        let (timestamp, rest) = line.split_once(' ').unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(timestamp).is_ok(), "{line}");
        assert_eq!(timestamp.len(), "2026-11-25T14:44:03.492034Z".len(), "{line}");
        assert_eq!(
            rest,
            " WARN delivery{endpoint=7}: payments_sandbox::log_format::tests: a message id=\"a \\\"b\\\"\" status=200 \
             ok=true reason=Some(3)\n"
        );
    }

    #[test]
    fn json_lines_are_one_object_each() {
        let line = written(LogFormat::Json, log);
        assert!(line.ends_with("}\n") && line.lines().count() == 1, "{line}");
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let timestamp = value["timestamp"].as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(timestamp).is_ok(), "{line}");
        assert_eq!(
            value,
            serde_json::json!({
                "timestamp": timestamp, "level": "WARN", "message": "a message", "id": "a \"b\"", "status": 200,
                "ok": true, "reason": "Some(3)", "target": "payments_sandbox::log_format::tests",
                "span": {"endpoint": 7, "name": "delivery"},
            })
        );
    }

    #[test]
    fn text_strings_are_quoted_as_debug_quotes_them() {
        for text in ["/balances/0b6c", "GET", "", "a \"b\"", "back\\slash", "tab\there", "é", "\u{7f}", "it's"] {
            let mut out = String::new();
            debug_string(&mut tracing_subscriber::fmt::format::Writer::new(&mut out), text).unwrap();
            assert_eq!(out, format!("{text:?}"));
        }
    }

    #[test]
    fn json_strings_escape_what_json_requires() {
        let mut out = String::new();
        json_string(&mut out, "a \"b\" \\ c\nd\u{1}é").unwrap();
        assert_eq!(out, r#""a \"b\" \\ c\nd\u0001é""#);
        assert_eq!(serde_json::from_str::<String>(&out).unwrap(), "a \"b\" \\ c\nd\u{1}é");
    }
}

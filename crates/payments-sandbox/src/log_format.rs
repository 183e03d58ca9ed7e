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

/// A request's line in the access log: what the edge's event (target [`ACCESS_TARGET`],
/// message `request`) records.
pub struct AccessLine<'a> {
    pub id: &'a str,
    pub client: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    pub latency_us: u64,
}

/// The access log's target: `RUST_LOG=payments_sandbox::access=off` turns it off.
pub const ACCESS_TARGET: &str = "payments_sandbox::access";

impl AccessLine<'_> {
    /// The line as a `tracing` event: where the binary has not said where the access log goes
    /// (`logs::access`).
    pub fn event(&self) {
        tracing::info!(
            target: ACCESS_TARGET,
            id = self.id,
            client = %self.client,
            method = self.method,
            path = self.path,
            status = self.status,
            latency_us = self.latency_us,
            "request"
        );
    }
}

impl LogFormat {
    /// Appends `line` to `out` as [`FormatEvent::format_event`] writes the edge's event for it,
    /// byte for byte but the time. Written without the event: the dispatch to the subscriber
    /// and a visitor call per field were most of a line's cost (BENCHMARKS.md, *The access line
    /// written directly*).
    pub fn access_line(self, line: &AccessLine<'_>, out: &mut String) -> fmt::Result {
        match self {
            Self::Text => {
                timestamp(out)?;
                out.write_str("  INFO ")?;
                out.write_str(ACCESS_TARGET)?;
                out.write_str(": request id=")?;
                debug_string(out, line.id)?;
                out.write_str(" client=")?;
                out.write_str(line.client)?;
                out.write_str(" method=")?;
                debug_string(out, line.method)?;
                out.write_str(" path=")?;
                debug_string(out, line.path)?;
                out.write_str(" status=")?;
                out.write_str(itoa::Buffer::new().format(line.status))?;
                out.write_str(" latency_us=")?;
            }
            Self::Json => {
                out.write_str("{\"timestamp\":\"")?;
                timestamp(out)?;
                out.write_str("\",\"level\":\"INFO\",\"message\":\"request\",\"id\":")?;
                json_string(out, line.id)?;
                out.write_str(",\"client\":")?;
                json_string(out, line.client)?;
                out.write_str(",\"method\":")?;
                json_string(out, line.method)?;
                out.write_str(",\"path\":")?;
                json_string(out, line.path)?;
                out.write_str(",\"status\":")?;
                out.write_str(itoa::Buffer::new().format(line.status))?;
                out.write_str(",\"latency_us\":")?;
            }
        }
        out.write_str(itoa::Buffer::new().format(line.latency_us))?;
        if self == Self::Json {
            out.write_str(",\"target\":\"")?;
            out.write_str(ACCESS_TARGET)?;
            out.write_str("\"}")?;
        }
        out.write_char('\n')
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
fn timestamp(out: &mut impl Write) -> fmt::Result {
    thread_local! {
        static SECOND: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
    }
    // The clock's seconds and microseconds as they are; a date is made of them once a second.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let second = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    SECOND.with_borrow_mut(|(cached, text)| {
        if *cached != second {
            let date = chrono::DateTime::from_timestamp(second, 0).unwrap_or_default();
            text.clear();
            write!(text, "{}", date.format("%Y-%m-%dT%H:%M:%S"))?;
            *cached = second;
        }
        out.write_str(text)
    })?;
    let mut micros = now.subsec_micros();
    let mut digits = [b'0'; 6];
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    out.write_char('.')?;
    out.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)?;
    out.write_char('Z')
}

/// Whether `text` is printable ASCII other than `"` and `\`: eight bytes at a time (a request's
/// id and path are most of an access line).
fn printable(text: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // Sets a byte's high bit where it is below 0x20, 0x7f or above, `"` or `\` (exact for
    // whether any is: a borrow only runs on from a byte that matched).
    let is =
        |word: u64, byte: u8| (word ^ (ONES * u64::from(byte))).wrapping_sub(ONES) & !(word ^ (ONES * u64::from(byte)));
    let refused = |word: u64| {
        (word.wrapping_sub(ONES * 0x20) & !word | is(word, b'"') | is(word, b'\\') | is(word, 0x7f) | word) & HIGH != 0
    };
    let mut chunks = text.chunks_exact(8);
    let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().expect("eight bytes"));
    if chunks.any(|chunk| refused(word(chunk))) {
        return false;
    }
    let mut last = [b'a'; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    !refused(word(&last))
}

/// `text` quoted as `Debug` quotes it: copied as it is where it holds only printable ASCII
/// other than `"` and `\` (a request's id, method and path, nearly always).
fn debug_string(out: &mut impl Write, text: &str) -> fmt::Result {
    if printable(text.as_bytes()) {
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

    use super::{AccessLine, LogFormat, debug_string, json_string};

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
    fn access_lines_are_written_as_their_event_is() {
        let line = AccessLine {
            id: "r-1 \"quoted\"",
            client: "2001:db8::1",
            method: "GET",
            path: "/balances/0b6c",
            status: 404,
            latency_us: 1234,
        };
        for format in [LogFormat::Text, LogFormat::Json] {
            let mut direct = String::new();
            format.access_line(&line, &mut direct).unwrap();
            let event = written(format, || line.event());
            // The same bytes but the time (`2026-11-25T14:44:03.492034Z`, 27 of them), which
            // starts each line's first number.
            let at = event.find(|c: char| c.is_ascii_digit()).unwrap();
            assert_eq!(direct.len(), event.len(), "{direct}{event}");
            assert_eq!((&direct[..at], &direct[at + 27..]), (&event[..at], &event[at + 27..]), "{format:?}");
        }
    }

    #[test]
    fn text_strings_are_quoted_as_debug_quotes_them() {
        let mut texts: Vec<String> =
            ["/balances/0b6c", "GET", "", "a \"b\"", "back\\slash", "tab\there", "é", "\u{7f}", "it's"]
                .map(str::to_owned)
                .to_vec();
        // Each character that is not copied as it is, at each place in texts of up to 19.
        for len in 1..20 {
            for at in 0..len {
                for c in ['"', '\\', '\n', '\u{1f}', '\u{7f}', 'é', ' ', '~'] {
                    texts.push((0..len).map(|i| if i == at { c } else { 'x' }).collect());
                }
            }
        }
        for text in texts {
            let mut out = String::new();
            debug_string(&mut out, &text).unwrap();
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

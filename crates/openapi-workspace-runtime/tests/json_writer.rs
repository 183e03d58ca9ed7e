//! `json_writer` writes what serde_json writes: every shape serde derives, and JSON values of
//! every kind, compared byte for byte.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use openapi_workspace_runtime::json_writer::write;

fn written<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    let mut out = Vec::new();
    write(&mut out, value).ok().map(|()| String::from_utf8(out).expect("UTF-8"))
}

/// Ours and serde_json's agree: the same text, or both refuse.
fn same<T: Serialize + ?Sized>(value: &T) {
    assert_eq!(written(value), serde_json::to_string(value).ok());
}

#[test]
fn text_is_escaped_wherever_a_character_to_escape_is() {
    let characters = ['\0', '\n', '\u{1f}', ' ', '!', '"', '#', '[', '\\', ']', '\u{7f}', 'é', '漢'];
    for len in 1..=25 {
        for at in 0..len {
            for character in characters {
                let text: String = (0..len).map(|i| if i == at { character } else { 'x' }).collect();
                same(&text);
            }
        }
    }
    same("");
}

/// Values of every JSON kind from a seed: texts with escapes, controls and non-ASCII among
/// plain ones, numbers at their bounds.
fn value(seed: &mut u64, depth: u32) -> Value {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let texts = [
        "",
        "a",
        "plain text of some length",
        "quote\"d",
        "back\\slash",
        "tab\tnew\nline",
        "\u{1}\u{1f}",
        "é ü 漢字 🎉",
        "\u{7f}",
        "0123456789abcdef",
    ];
    let pick = |n: u64| usize::try_from(*seed >> 8).unwrap_or(0) % usize::try_from(n).unwrap_or(1);
    match (*seed % if depth < 4 { 9 } else { 7 }, pick(texts.len() as u64)) {
        (0, _) => Value::Null,
        (1, i) => Value::Bool(i % 2 == 0),
        (2, i) => Value::from([i64::MIN, -1, 0, 7, i64::MAX][i % 5]),
        (3, i) => Value::from([u64::MAX, 1 << 53, 10][i % 3]),
        (4, i) => Value::from([0.1, -2.5e-300, 1e300, 3.0, f64::MIN_POSITIVE][i % 5]),
        (5 | 6, i) => Value::from(texts[i].repeat(1 + i % 3)),
        (7, i) => Value::Array((0..i % 4).map(|_| value(seed, depth + 1)).collect()),
        (_, i) => Value::Object(
            (0..i % 4).map(|k| (format!("{}{k}", texts[(i + k) % texts.len()]), value(seed, depth + 1))).collect(),
        ),
    }
}

#[test]
fn json_values_are_written_as_serde_json_writes_them() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..2000 {
        same(&value(&mut seed, 0));
    }
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize)]
struct Pair(i8, &'static str);

#[derive(Serialize)]
struct Wrapped(u16);

#[derive(Serialize)]
enum External {
    Unit,
    Newtype(i32),
    Tuple(u8, char),
    Struct { a: Option<bool> },
}

#[derive(Serialize)]
#[serde(tag = "kind")]
enum Internal {
    One { x: f32 },
    Two(BTreeMap<String, i128>),
}

#[derive(Serialize)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Text(String),
    Nothing,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Untagged {
    Number(u128),
    List(Vec<Option<f64>>),
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    #[serde(rename = "first key")]
    First,
}

#[derive(Serialize)]
struct Model {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    absent: Option<u8>,
    unit: Unit,
    pair: Pair,
    wrapped: Wrapped,
    external: Vec<External>,
    internal: Vec<Internal>,
    adjacent: Vec<Adjacent>,
    untagged: Vec<Untagged>,
    by_number: BTreeMap<i64, ()>,
    by_bool: BTreeMap<bool, char>,
    by_char: BTreeMap<char, u64>,
    by_variant: BTreeMap<Key, Vec<u8>>,
    #[serde(with = "bytes")]
    bytes: Vec<u8>,
    raw: Box<serde_json::value::RawValue>,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

mod bytes {
    pub(super) fn serialize<S: serde::Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(bytes)
    }
}

/// A map keyed by floats (no Rust map is, but a `Serialize` may write one).
struct FloatKeys(&'static [f64]);

impl Serialize for FloatKeys {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (i, key) in self.0.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation)]
            map.serialize_entry(&(*key as f32), &i)?;
            map.serialize_entry(key, &i)?;
        }
        map.end()
    }
}

#[test]
fn every_shape_serde_derives_is_written_as_serde_json_writes_it() {
    let model = Model {
        kind: "model \"quoted\"",
        absent: None,
        unit: Unit,
        pair: Pair(-8, "p\u{0}"),
        wrapped: Wrapped(65535),
        external: vec![External::Unit, External::Newtype(-1), External::Tuple(1, '"'), External::Struct { a: None }],
        internal: vec![Internal::One { x: 1.5 }, Internal::Two([("n".to_owned(), i128::MIN)].into())],
        adjacent: vec![Adjacent::Text("x".to_owned()), Adjacent::Nothing],
        untagged: vec![Untagged::Number(u128::MAX), Untagged::List(vec![None, Some(f64::NAN), Some(-0.0)])],
        by_number: [(-3, ()), (12, ())].into(),
        by_bool: [(true, 'é'), (false, '\n')].into(),
        by_char: [('k', 1)].into(),
        by_variant: [(Key::First, vec![1, 2])].into(),
        bytes: vec![0, 255],
        raw: serde_json::value::RawValue::from_string(r#"{ "as" : [ "written" ] }"#.to_owned()).unwrap(),
        rest: [("flattened".to_owned(), Value::from("yes"))].into(),
    };
    same(&model);
    same(&[f32::INFINITY, 0.1_f32]);
    same(&FloatKeys(&[1.5, 2.0]));
    same(&FloatKeys(&[f64::NAN]));
    same(&BTreeMap::from([((1, 2), 1)]));
    same("");
}

//! A JSON request body as the validators read it, in place: one flat tape of its tokens over
//! the request's bytes, instead of a `serde_json::Value` (a map and a string per key and per
//! text). A valid body is then read into its model straight from the bytes, so it is parsed by
//! the validators without being copied; jsonschema validates any representation that implements
//! its `json` traits (*Why, measured: The generated handlers*).
//!
//! The tape reads exactly as the `Value` serde_json would have made: the same parser (so the
//! same syntax errors), numbers as serde_json's, and an object's members in `Value`'s order —
//! sorted by name, a repeated name's last value the one kept — so validation, its messages and
//! the order of its errors are the same whichever of the two a validator is given.

use std::borrow::Cow;
use std::fmt;

use jsonschema::json::{Array, Json, Node, NodeIdentity, Object, cmp, unique};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The JSON representation the runtime's validators take: a `Value` the runtime has built (a
/// query, a form, parts), or a body's [`Tape`].
pub struct RequestJson;

/// One JSON value, in a `Value` or on a tape.
#[derive(Clone, Copy)]
pub enum Instance<'a> {
    Value(&'a Value),
    At(&'a Tape<'a>, usize),
    /// A property name, validated as a string (`propertyNames`).
    Name(&'a str),
}

/// A JSON text's tokens in order; each container's entry says where it ends.
pub struct Tape<'a> {
    entries: Vec<Entry<'a>>,
    /// Strings with escapes, unescaped (the others are read in place).
    unescaped: String,
}

#[derive(Clone, Debug)]
enum Entry<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Text(&'a str),
    /// A string that had escapes: `unescaped[at..at + len]`.
    Unescaped {
        at: usize,
        len: usize,
    },
    /// `len` items follow, each its subtree; the entry after the last is `end`.
    Array {
        len: usize,
        end: usize,
    },
    /// Its members follow, name then value subtree each, then `pairs` [`Entry::Member`]s from
    /// `sorted`: the first `len` of them are its distinct names in order, each the index of
    /// the name (its value after it). The entry after all that is `end`.
    Object {
        len: usize,
        sorted: usize,
        end: usize,
    },
    Member(usize),
}

impl<'a> Tape<'a> {
    /// Parses `bytes` as one JSON text, with serde_json's parser and its errors.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        // Room for a small body's tokens without growing; a larger one grows as it goes.
        let mut tape = Tape { entries: Vec::with_capacity((bytes.len() / 3).clamp(4, 256)), unescaped: String::new() };
        let mut parser = serde_json::Deserializer::from_slice(bytes);
        Builder(&mut tape).deserialize(&mut parser)?;
        parser.end()?;
        Ok(tape)
    }

    /// The whole text.
    pub fn root(&self) -> Instance<'_> {
        Instance::At(self, 0)
    }

    fn text(&self, at: usize) -> Option<&str> {
        text_of(&self.entries[at], &self.unescaped)
    }

    /// The index after the subtree at `at`.
    fn next(&self, at: usize) -> usize {
        match self.entries[at] {
            Entry::Array { end, .. } | Entry::Object { end, .. } => end,
            _ => at + 1,
        }
    }

    /// An object's distinct names, sorted: [`Entry::Member`]s, read with [`name_at`].
    fn names(&self, object: usize) -> &[Entry<'a>] {
        let Entry::Object { len, sorted, .. } = self.entries[object] else { unreachable!("an object's index") };
        &self.entries[sorted..sorted + len]
    }

    fn value(&self, at: usize) -> Value {
        match &self.entries[at] {
            Entry::Null => Value::Null,
            Entry::Bool(yes) => Value::Bool(*yes),
            Entry::Number(number) => Value::Number(number.clone()),
            Entry::Text(_) | Entry::Unescaped { .. } => Value::String(self.text(at).unwrap_or_default().to_owned()),
            Entry::Array { end, .. } => {
                let mut items = Vec::new();
                let mut item = at + 1;
                while item < *end {
                    items.push(self.value(item));
                    item = self.next(item);
                }
                Value::Array(items)
            }
            Entry::Object { .. } => Value::Object(
                self.names(at)
                    .iter()
                    .map(name_at)
                    .map(|name| (self.text(name).unwrap_or_default().to_owned(), self.value(name + 1)))
                    .collect(),
            ),
            Entry::Member(_) => unreachable!("members are read through their object"),
        }
    }
}

/// A string's or a name's text: in place, or among the unescaped ones.
fn text_of<'s>(entry: &'s Entry<'_>, unescaped: &'s str) -> Option<&'s str> {
    match *entry {
        Entry::Text(text) => Some(text),
        Entry::Unescaped { at, len } => Some(&unescaped[at..at + len]),
        _ => None,
    }
}

/// The index of the name an object's sorted [`Entry::Member`] stands for (its value after it).
fn name_at(member: &Entry<'_>) -> usize {
    match member {
        Entry::Member(name) => *name,
        _ => unreachable!("an object's sorted members"),
    }
}

/// Appends the value it is given to the tape.
struct Builder<'t, 'a>(&'t mut Tape<'a>);

impl<'de> DeserializeSeed<'de> for Builder<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Builder<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.entries.push(Entry::Null);
        Ok(())
    }

    fn visit_bool<E>(self, yes: bool) -> Result<(), E> {
        self.0.entries.push(Entry::Bool(yes));
        Ok(())
    }

    fn visit_u64<E>(self, number: u64) -> Result<(), E> {
        self.0.entries.push(Entry::Number(number.into()));
        Ok(())
    }

    fn visit_i64<E>(self, number: i64) -> Result<(), E> {
        self.0.entries.push(Entry::Number(number.into()));
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, number: f64) -> Result<(), E> {
        // serde_json gives an f64 only for a literal that is no i64 or u64. One that rounds to
        // exactly -2^63 is (short of a fraction or exponent) below i64::MIN, yet would meet an
        // int64's `minimum` as i64::MIN itself: one step down keeps it out, as a typed server
        // refuses any such literal for an i64.
        let number = match number == i64::MIN as f64 {
            true => f64::from_bits(number.to_bits() + 1),
            false => number,
        };
        // As `Value` reads it: serde_json gives only finite numbers.
        let number = Number::from_f64(number).ok_or_else(|| E::custom("a number out of range"))?;
        self.0.entries.push(Entry::Number(number));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<(), E> {
        self.0.entries.push(Entry::Text(text));
        Ok(())
    }

    fn visit_str<E>(self, text: &str) -> Result<(), E> {
        let at = self.0.unescaped.len();
        self.0.unescaped.push_str(text);
        self.0.entries.push(Entry::Unescaped { at, len: text.len() });
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut items: S) -> Result<(), S::Error> {
        let at = self.0.entries.len();
        self.0.entries.push(Entry::Null);
        let mut len = 0;
        while items.next_element_seed(Builder(&mut *self.0))?.is_some() {
            len += 1;
        }
        self.0.entries[at] = Entry::Array { len, end: self.0.entries.len() };
        Ok(())
    }

    fn visit_map<M: MapAccess<'de>>(self, mut members: M) -> Result<(), M::Error> {
        let tape = self.0;
        let at = tape.entries.len();
        tape.entries.push(Entry::Null);
        let mut pairs = 0;
        while let Some(()) = members.next_key_seed(Name(&mut *tape))? {
            members.next_value_seed(Builder(&mut *tape))?;
            pairs += 1;
        }
        // The members, sorted by name and then by position: of a repeated name, the last is kept.
        let sorted = tape.entries.len();
        let mut name = at + 1;
        for _ in 0..pairs {
            tape.entries.push(Entry::Member(name));
            name = tape.next(name + 1);
        }
        let (head, region) = tape.entries.split_at_mut(sorted);
        let text = |member: &Entry| {
            let name = name_at(member);
            (text_of(&head[name], &tape.unescaped).expect("a member's name is text"), name)
        };
        region.sort_unstable_by(|a, b| text(a).cmp(&text(b)));
        let mut len = 0;
        for i in 0..region.len() {
            let last_of_its_name = region.get(i + 1).is_none_or(|next| text(next).0 != text(&region[i]).0);
            if last_of_its_name {
                region.swap(len, i);
                len += 1;
            }
        }
        let end = tape.entries.len();
        tape.entries[at] = Entry::Object { len, sorted, end };
        Ok(())
    }
}

/// Appends a member's name to the tape.
struct Name<'t, 'a>(&'t mut Tape<'a>);

impl<'de> DeserializeSeed<'de> for Name<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(Builder(self.0))
    }
}

// -- what jsonschema reads ---------------------------------------------------------------------

impl Json for RequestJson {
    type Node<'a> = Instance<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    // Both kinds of object look a name up in sorted names.
    const KEYS_PER_LOOKUP: usize = 2;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(_: &mut (), string: &str, f: impl FnOnce(Instance<'_>) -> T) -> T {
        f(Instance::Name(string))
    }
}

/// An object's members, as [`Instance::as_object`] gives them.
#[derive(Clone, Copy)]
pub enum Members<'a> {
    Map(&'a Map<String, Value>),
    At(&'a Tape<'a>, usize),
}

/// An array's items, as [`Instance::as_array`] gives them.
#[derive(Clone, Copy)]
pub enum Items<'a> {
    Slice(&'a [Value]),
    At(&'a Tape<'a>, usize),
}

impl<'a> Instance<'a> {
    fn entry(&self) -> Option<(&'a Tape<'a>, &'a Entry<'a>)> {
        match *self {
            Instance::At(tape, at) => Some((tape, &tape.entries[at])),
            _ => None,
        }
    }
}

impl<'a> Node<'a, RequestJson> for Instance<'a> {
    type Object = Members<'a>;
    type Array = Items<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<Members<'a>> {
        match *self {
            Instance::Value(Value::Object(members)) => Some(Members::Map(members)),
            Instance::At(tape, at) if matches!(tape.entries[at], Entry::Object { .. }) => Some(Members::At(tape, at)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<Items<'a>> {
        match *self {
            Instance::Value(Value::Array(items)) => Some(Items::Slice(items)),
            Instance::At(tape, at) if matches!(tape.entries[at], Entry::Array { .. }) => Some(Items::At(tape, at)),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match *self {
            Instance::Value(Value::String(text)) => Some(Cow::Borrowed(text)),
            Instance::At(tape, at) => tape.text(at).map(Cow::Borrowed),
            Instance::Name(name) => Some(Cow::Borrowed(name)),
            Instance::Value(_) => None,
        }
    }

    fn as_number(&self) -> Option<Number> {
        match (self, self.entry()) {
            (Instance::Value(Value::Number(number)), _) | (_, Some((_, Entry::Number(number)))) => Some(number.clone()),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match (self, self.entry()) {
            (Instance::Value(Value::Bool(yes)), _) | (_, Some((_, Entry::Bool(yes)))) => Some(*yes),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!((self, self.entry()), (Instance::Value(Value::Null), _) | (_, Some((_, Entry::Null))))
    }

    fn json_type(&self) -> jsonschema::JsonType {
        use jsonschema::JsonType;
        match *self {
            Instance::Value(value) => match value {
                Value::Null => JsonType::Null,
                Value::Bool(_) => JsonType::Boolean,
                Value::Number(_) => JsonType::Number,
                Value::String(_) => JsonType::String,
                Value::Array(_) => JsonType::Array,
                Value::Object(_) => JsonType::Object,
            },
            Instance::At(tape, at) => match tape.entries[at] {
                Entry::Null => JsonType::Null,
                Entry::Bool(_) => JsonType::Boolean,
                Entry::Number(_) => JsonType::Number,
                Entry::Text(_) | Entry::Unescaped { .. } => JsonType::String,
                Entry::Array { .. } => JsonType::Array,
                Entry::Object { .. } => JsonType::Object,
                Entry::Member(_) => unreachable!("members are read through their object"),
            },
            Instance::Name(_) => JsonType::String,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        // `enum` and `const` on scalars answered without building a value (asked per request).
        match (*self, self.entry()) {
            (Instance::Value(value), _) => cmp::equal(value, expected),
            (Instance::Name(name), _) => expected.as_str() == Some(name),
            (Instance::At(tape, at), Some((_, Entry::Text(_) | Entry::Unescaped { .. }))) => {
                expected.as_str() == tape.text(at)
            }
            (_, Some((_, Entry::Null))) => expected.is_null(),
            (_, Some((_, Entry::Bool(yes)))) => expected.as_bool() == Some(*yes),
            (_, Some((_, Entry::Number(number)))) => cmp::equal(&Value::Number(number.clone()), expected),
            _ => cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        match *self {
            Instance::Value(value) => Cow::Borrowed(value),
            Instance::At(tape, at) => Cow::Owned(tape.value(at)),
            Instance::Name(name) => Cow::Owned(Value::String(name.to_owned())),
        }
    }

    fn identity(&self) -> Option<NodeIdentity> {
        match *self {
            Instance::Value(value) => Some(NodeIdentity::new(std::ptr::from_ref(value) as usize)),
            Instance::At(tape, at) => Some(NodeIdentity::tagged(std::ptr::from_ref(tape) as usize, at as u32)),
            Instance::Name(_) => None,
        }
    }
}

/// [`Members::members`]' iterator.
pub struct MembersIter<'a>(MembersOf<'a>);

enum MembersOf<'a> {
    Map(serde_json::map::Iter<'a>),
    At(&'a Tape<'a>, std::slice::Iter<'a, Entry<'a>>),
}

impl<'a> Iterator for MembersIter<'a> {
    type Item = (&'a str, Instance<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MembersOf::Map(members) => members.next().map(|(name, value)| (name.as_str(), Instance::Value(value))),
            MembersOf::At(tape, names) => {
                let name = name_at(names.next()?);
                Some((tape.text(name).unwrap_or_default(), Instance::At(tape, name + 1)))
            }
        }
    }
}

impl<'a> Object<'a, RequestJson> for Members<'a> {
    type Node = Instance<'a>;
    type MemberName = &'a str;
    type MembersIter = MembersIter<'a>;

    fn len(&self) -> usize {
        match *self {
            Members::Map(members) => members.len(),
            Members::At(tape, at) => tape.names(at).len(),
        }
    }

    fn get(&self, key: &String) -> Option<Instance<'a>> {
        match *self {
            Members::Map(members) => members.get(key).map(Instance::Value),
            Members::At(tape, at) => {
                let names = tape.names(at);
                let text = |member: &Entry| tape.text(name_at(member)).unwrap_or_default();
                let found = names.binary_search_by(|member| text(member).cmp(key.as_str())).ok()?;
                Some(Instance::At(tape, name_at(&names[found]) + 1))
            }
        }
    }

    fn members(&self) -> MembersIter<'a> {
        match *self {
            Members::Map(members) => MembersIter(MembersOf::Map(members.iter())),
            Members::At(tape, at) => MembersIter(MembersOf::At(tape, tape.names(at).iter())),
        }
    }
}

/// [`Items::elements`]' iterator.
pub enum ItemsIter<'a> {
    Slice(std::slice::Iter<'a, Value>),
    At(&'a Tape<'a>, usize, usize),
}

impl<'a> Iterator for ItemsIter<'a> {
    type Item = Instance<'a>;

    fn next(&mut self) -> Option<Instance<'a>> {
        match self {
            ItemsIter::Slice(items) => items.next().map(Instance::Value),
            ItemsIter::At(tape, item, end) => {
                if *item >= *end {
                    return None;
                }
                let at = *item;
                *item = tape.next(at);
                Some(Instance::At(tape, at))
            }
        }
    }
}

impl<'a> Array<'a, RequestJson> for Items<'a> {
    type Node = Instance<'a>;
    type ElementsIter = ItemsIter<'a>;

    fn len(&self) -> usize {
        match *self {
            Items::Slice(items) => items.len(),
            Items::At(tape, at) => match tape.entries[at] {
                Entry::Array { len, .. } => len,
                _ => unreachable!("an array"),
            },
        }
    }

    fn elements(&self) -> ItemsIter<'a> {
        match *self {
            Items::Slice(items) => ItemsIter::Slice(items.iter()),
            Items::At(tape, at) => ItemsIter::At(tape, at + 1, tape.next(at)),
        }
    }

    fn is_unique(&self) -> bool {
        match *self {
            Items::Slice(items) => unique::is_unique(items),
            Items::At(..) => {
                let values: Vec<Value> = self.elements().map(|item| item.to_value().into_owned()).collect();
                unique::is_unique(&values)
            }
        }
    }
}

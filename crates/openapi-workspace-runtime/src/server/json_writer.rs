//! A model written as JSON into a byte vector: the bytes `serde_json::to_writer` writes, for
//! fewer instructions.
//!
//! serde_json looks each byte of every key and text value up in a table to find what needs
//! escaping, and writes a key through a serializer of its own: most of a model's instructions
//! (BENCHMARKS.md, *A model's JSON written directly*). Here text is checked eight bytes at a time
//! and copied whole when nothing in it needs escaping, nearly always; what is rare (text to
//! escape, floats, bytes) is written by serde_json itself, so the bytes stay serde_json's.

use std::fmt;

use serde::ser::{self, Serialize};

/// Why a model could not be written: a map key that is no text, number or boolean, or a
/// model's own `Serialize` refusing.
#[derive(Debug)]
pub struct Error(Box<str>);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self(message.to_string().into())
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Self(error.to_string().into())
    }
}

/// Appends `value` to `out` as JSON, as `serde_json::to_writer` would. On an error, `out`
/// holds part of it.
pub fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(Json(out))
}

/// Whether `text` is written as it is between quotes: no control character, `"` or `\`.
#[inline(always)]
fn plain(text: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte below 0x20, 0x22 or 0x5c in the word sets its high bit here (exact for whether
    // any does: a borrow only runs on from a byte that matched).
    let escapes = |word: u64| {
        let below_space = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = (word ^ (ONES * b'"' as u64)).wrapping_sub(ONES) & !(word ^ (ONES * b'"' as u64));
        let backslash = (word ^ (ONES * b'\\' as u64)).wrapping_sub(ONES) & !(word ^ (ONES * b'\\' as u64));
        (below_space | quote | backslash) & HIGH != 0
    };
    let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().expect("eight bytes"));
    if text.len() < 8 {
        // Padded with a byte that needs no escape.
        let mut padded = [b'a'; 8];
        padded[..text.len()].copy_from_slice(text);
        return !escapes(word(&padded));
    }
    let mut chunks = text.chunks_exact(8);
    if chunks.any(|chunk| escapes(word(chunk))) {
        return false;
    }
    // The last eight bytes, overlapping the last whole chunk: all of them are the text's.
    chunks.remainder().is_empty() || !escapes(word(&text[text.len() - 8..]))
}

/// `text` as a JSON string. Inlined: a key is a literal, whose check then folds away.
#[inline(always)]
fn string(out: &mut Vec<u8>, text: &str) -> Result<(), Error> {
    if plain(text.as_bytes()) {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        Ok(serde_json::to_writer(out, text)?)
    }
}

fn integer(out: &mut Vec<u8>, value: impl itoa::Integer) -> Result<(), Error> {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    Ok(())
}

/// A `Serializer`'s methods for every integer type, each `$write` with the serializer as
/// `$this` and the integer as `$value`.
macro_rules! integers {
    (|$this:ident, $value:ident| $write:expr) => {
        integers!(@ |$this, $value| $write; serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
            serialize_i64 i64, serialize_i128 i128, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32,
            serialize_u64 u64, serialize_u128 u128);
    };
    (@ |$this:ident, $value:ident| $write:expr; $($method:ident $int:ty),*) => {
        $(fn $method(self, $value: $int) -> Result<(), Error> {
            let $this = self;
            $write
        })*
    };
}

/// The serializer: a value written onto the end of the vector.
struct Json<'a>(&'a mut Vec<u8>);

/// A sequence or map being written: whether the next element is its first. `close` is what
/// ends it: `]`, `}`, or `]}` / `}}` for an enum variant's.
struct Compound<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    close: &'static [u8],
    /// A `RawValue`: its one field is written as it is, with nothing around it.
    raw: bool,
}

impl Compound<'_> {
    #[inline(always)]
    fn separate(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.separate();
        value.serialize(Json(self.out))
    }

    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.separate();
        string(self.out, key)?;
        self.out.push(b':');
        value.serialize(Json(self.out))
    }

    fn end(self) -> Result<(), Error> {
        self.out.extend_from_slice(self.close);
        Ok(())
    }

    /// A `RawValue`'s one field: its JSON text, written as serde_json writes it.
    #[cold]
    fn raw_text<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let serde_json::Value::String(raw) = serde_json::to_value(value)? else {
            return Err(ser::Error::custom("a RawValue that is not text"));
        };
        self.out.extend_from_slice(raw.as_bytes());
        Ok(())
    }
}

impl<'a> Json<'a> {
    fn open(self, open: &[u8], close: &'static [u8]) -> Compound<'a> {
        self.0.extend_from_slice(open);
        Compound { out: self.0, first: true, close, raw: false }
    }

    /// `{"variant":` and `open` before a variant's content; `close` after it.
    fn variant(self, variant: &str, open: &[u8], close: &'static [u8]) -> Result<Compound<'a>, Error> {
        self.0.push(b'{');
        string(self.0, variant)?;
        self.0.push(b':');
        Ok(self.open(open, close))
    }

    /// What serde_json writes for `value`, written by serde_json.
    fn delegate<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        Ok(serde_json::to_writer(self.0, value)?)
    }
}

/// The name serde_json gives a `RawValue`'s struct (feature `raw_value`): its one field is JSON
/// written as it is.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

impl<'a> ser::Serializer for Json<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.0.extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }
    integers!(|json, value| integer(json.0, value));
    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.delegate(&value)
    }
    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.delegate(&value)
    }
    fn serialize_char(self, value: char) -> Result<(), Error> {
        string(self.0, value.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        string(self.0, value)
    }
    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        self.delegate(value)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.0.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        string(self.0, variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut content = self.variant(variant, b"", b"}")?;
        content.element(value)?;
        content.end()
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"[", b"]"))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant(variant, b"[", b"]}")
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(self.open(b"{", b"}"))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'a>, Error> {
        match name {
            RAW_VALUE => Ok(Compound { out: self.0, first: true, close: b"", raw: true }),
            _ => Ok(self.open(b"{", b"}")),
        }
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.variant(variant, b"{", b"}}")
    }
}

/// The compounds written as arrays: each element after a comma.
macro_rules! elements {
    ($($compound:ident::$method:ident),*) => {$(
        impl ser::$compound for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                Compound::end(self)
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.separate();
        key.serialize(MapKey(self.out))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.out.push(b':');
        value.serialize(Json(self.out))
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    /// Inlined into the model's `Serialize`, where the key is a literal (see [`string`]).
    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        if self.raw {
            return self.raw_text(value);
        }
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self)
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self)
    }
}

/// A map's key, as serde_json writes one: text as it is; numbers, booleans and unit variants
/// quoted; anything else refused.
struct MapKey<'a>(&'a mut Vec<u8>);

impl MapKey<'_> {
    fn quoted(self, text: &str) -> Result<(), Error> {
        string(self.0, text)
    }

    fn refused<T>() -> Result<T, Error> {
        Err(ser::Error::custom("key must be a string"))
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.quoted(if value { "true" } else { "false" })
    }
    integers!(|key, value| key.quoted(itoa::Buffer::new().format(value)));
    // serde_json quotes a finite float key as it writes the float; it refuses the others.
    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        match value.is_finite() {
            true => self.quoted(&serde_json::to_string(&value)?),
            false => Self::refused(),
        }
    }
    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        match value.is_finite() {
            true => self.quoted(&serde_json::to_string(&value)?),
            false => Self::refused(),
        }
    }
    fn serialize_char(self, value: char) -> Result<(), Error> {
        self.quoted(value.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        self.quoted(value)
    }
    fn serialize_bytes(self, _value: &[u8]) -> Result<(), Error> {
        Self::refused()
    }
    fn serialize_none(self) -> Result<(), Error> {
        Self::refused()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Self::refused()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Self::refused()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.quoted(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Self::refused()
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Self::refused()
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Self::refused()
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Self::refused()
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Self::refused()
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Self::refused()
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Error> {
        Self::refused()
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Self::refused()
    }
}

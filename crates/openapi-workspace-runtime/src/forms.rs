//! Form bodies (`application/x-www-form-urlencoded`) of nested values, as Stripe, Rails and PHP
//! write them: an object's property under `name[property]`, an array's item under `name[index]`
//! (`address[city]=Paris&items[0][price]=5&expand[0]=customer`). A flat form is the same thing
//! with no brackets. progenitor writes a form with serde_urlencoded, which refuses any nested
//! value (a Stripe client could not send an address), and the server's flat reader would drop
//! one: the client writes [`pairs`], the server reads [`tree`] typed by the body's schema
//! ([`typed`]), since every value on the wire is text.

use serde_json::{Map, Value};

/// `value` (an object) as the pairs of its form. `null` and empty arrays and objects write
/// nothing: the form has no word for them, and a reader takes them as absent.
pub fn pairs(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Value::Object(fields) = value {
        for (name, value) in fields {
            flatten(name.clone(), value, &mut out);
        }
    }
    out
}

/// A scalar as a form writes it: a string as itself, a number or boolean as JSON writes it.
pub fn text(scalar: &Value) -> String {
    match scalar {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn flatten(key: String, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Null => {}
        Value::String(_) | Value::Bool(_) | Value::Number(_) => out.push((key, text(value))),
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(index, item)| flatten(format!("{key}[{index}]"), item, out))
        }
        Value::Object(fields) => fields.iter().for_each(|(name, item)| flatten(format!("{key}[{name}]"), item, out)),
    }
}

/// The pairs of a form as one object whose leaves are their text: `a[b][0]=x` is
/// `{"a": {"b": {"0": "x"}}}` (which of those objects are arrays, and which texts are numbers, is
/// the schema's to say: [`typed`]); `a[]=x` appends to `a`. Refuses a key whose brackets do not
/// close, and a name given a value and properties both.
pub fn tree<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Value, BadKey> {
    grow(pairs, |key, why| Err(BadKey { key: key.to_owned(), why }))
}

/// [`tree`] for a whole form body, where a key whose brackets are not that shape (`a[b`,
/// `a[b]c`) is one name as written: a free-form object's properties may be named so, and the
/// validator judges them as names.
pub fn body_tree<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Value, BadKey> {
    grow(pairs, |key, _| Ok(vec![key.to_owned()]))
}

fn grow<K: AsRef<str>, V: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, V)>,
    malformed: impl Fn(&str, &'static str) -> Result<Vec<String>, BadKey>,
) -> Result<Value, BadKey> {
    let mut root = Map::new();
    for (key, value) in pairs {
        let key = key.as_ref();
        let path = match path(key) {
            Ok(path) => path,
            Err(why) => malformed(key, why)?,
        };
        insert(&mut root, &path, value.as_ref().to_owned()).map_err(|why| BadKey { key: key.to_owned(), why })?;
    }
    Ok(Value::Object(root))
}

/// `a[b][0]` as `[a, b, 0]`, or why its brackets are not that shape.
fn path(key: &str) -> Result<Vec<String>, &'static str> {
    let (name, mut rest) = key.split_once('[').map_or((key, ""), |(name, rest)| (name, rest));
    let mut path = vec![name.to_owned()];
    while !rest.is_empty() {
        let (segment, after) = rest.split_once(']').ok_or("a `[` without its `]`")?;
        path.push(segment.to_owned());
        rest = match after {
            "" => "",
            after => after.strip_prefix('[').ok_or("text after `]` not in `[…]`")?,
        };
    }
    Ok(path)
}

/// A form key [`tree`] cannot place, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadKey {
    pub key: String,
    pub why: &'static str,
}

impl std::fmt::Display for BadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.key, self.why)
    }
}

impl std::error::Error for BadKey {}

fn insert(object: &mut Map<String, Value>, path: &[String], value: String) -> Result<(), &'static str> {
    let (segment, rest) = path.split_first().expect("a key has a name");
    // `a[]`: the next item of `a`, numbered after those before it.
    let segment = match segment.is_empty() {
        true => object.len().to_string(),
        false => segment.clone(),
    };
    if rest.is_empty() {
        return match object.insert(segment, Value::String(value)) {
            Some(Value::Object(_)) => Err("given a value and properties both"),
            _ => Ok(()),
        };
    }
    match object.entry(segment).or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(inner) => insert(inner, rest, value),
        _ => Err("given a value and properties both"),
    }
}

/// `value` (text leaves, from [`tree`]) as the JSON `schema` describes: texts of numbers and
/// booleans where it says so, objects numbered `0, 1, …` where it says array (and one text where
/// it says array, an array of one), through `$ref`s into `components`, `allOf` parts and the
/// first arm of a `oneOf`/`anyOf` the value fits. What the schema does not describe stays text,
/// for the validator to judge.
pub fn typed(value: Value, schema: &Value, components: &Value) -> Value {
    typed_at(value, schema, components, 0, true)
}

/// How deep `$ref`s are followed: a schema that refers to itself ends here.
const DEPTH: usize = 64;

/// `lone`: whether one text may stand for an array of one — not while a union's arms are tried
/// (Stripe's `anyOf: [array, enum [""]]` reads `""` as the empty text, not as `[""]`), unless
/// no arm fits otherwise.
fn typed_at(value: Value, schema: &Value, components: &Value, depth: usize, lone: bool) -> Value {
    let Some(schema) = resolved(schema, components) else { return value };
    if depth == DEPTH {
        return value;
    }
    let mut value = value;
    for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        value = typed_at(value, part, components, depth + 1, lone);
    }
    if let Some(arms) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        for lone in [false, lone] {
            for arm in arms {
                let candidate = typed_at(value.clone(), arm, components, depth + 1, lone);
                if fits(&candidate, arm, components) {
                    return candidate;
                }
            }
        }
        return value;
    }
    match (kind(schema), value) {
        (Some("integer"), Value::String(text)) => match text.parse::<i64>() {
            Ok(number) => Value::from(number),
            Err(_) => text.parse::<u64>().map(Value::from).unwrap_or(Value::String(text)),
        },
        (Some("number"), Value::String(text)) => {
            text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::String(text), Value::Number)
        }
        (Some("boolean"), Value::String(text)) => match text.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(text),
        },
        (Some("array"), value) => {
            let items = schema.get("items").unwrap_or(&Value::Bool(true));
            let listed = match value {
                Value::Object(numbered) => match numbered_items(numbered) {
                    Ok(listed) => listed,
                    Err(object) => return Value::Object(object),
                },
                Value::Array(listed) => listed,
                text if lone => vec![text],
                text => return text,
            };
            Value::Array(listed.into_iter().map(|item| typed_at(item, items, components, depth + 1, true)).collect())
        }
        (_, Value::Object(fields)) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let others = schema.get("additionalProperties");
            let typed_fields = fields.into_iter().map(|(name, field)| {
                let described = properties.and_then(|p| p.get(&name)).or(others);
                let field = match described {
                    Some(described) => typed_at(field, described, components, depth + 1, true),
                    None => field,
                };
                (name, field)
            });
            Value::Object(typed_fields.collect())
        }
        (_, value) => value,
    }
}

/// An object whose keys are all indices, as its items in their order; else the object.
fn numbered_items(object: Map<String, Value>) -> Result<Vec<Value>, Map<String, Value>> {
    if !object.keys().all(|key| key.parse::<usize>().is_ok()) {
        return Err(object);
    }
    let mut items: Vec<(usize, Value)> =
        object.into_iter().map(|(key, item)| (key.parse().expect("checked above"), item)).collect();
    items.sort_by_key(|(index, _)| *index);
    Ok(items.into_iter().map(|(_, item)| item).collect())
}

/// `schema` through its `$ref`s into `components`; `None` for a reference that leads nowhere.
fn resolved<'a>(schema: &'a Value, components: &'a Value) -> Option<&'a Value> {
    let mut schema = schema;
    for _ in 0..DEPTH {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { return Some(schema) };
        let name = reference.strip_prefix("#/components/schemas/")?;
        schema = components.get("schemas")?.get(name)?;
    }
    None
}

/// The schema's one type but `null` (a type list names it with `null`).
fn kind(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(kind) => Some(kind),
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null"),
        _ => None,
    }
}

/// Whether `value` is of the kind `arm` says, and one of its `enum` values when it lists them:
/// enough to choose an arm, which the validator then judges whole.
fn fits(value: &Value, arm: &Value, components: &Value) -> bool {
    let Some(arm) = resolved(arm, components) else { return false };
    if let Some(values) = arm.get("enum").and_then(Value::as_array) {
        return values.contains(value);
    }
    match kind(arm) {
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some("string") => value.is_string(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{body_tree, pairs, tree, typed};

    #[test]
    fn nested_values_go_as_bracketed_pairs_and_come_back_typed_by_their_schema() {
        let value = json!({
            "name": "Ada", "age": 36, "active": true, "nothing": null,
            "address": {"city": "Paris", "line1": "1 rue"},
            "items": [{"price": 5, "tax_rates": ["t1"]}, {"price": 7, "tax_rates": ""}],
            "expand": ["customer", "invoice"],
            "created": {"gte": 5},
            "due": 9,
        });
        let written = pairs(&value);
        let keys: Vec<&str> = written.iter().map(|(key, _)| key.as_str()).collect();
        assert!(keys.contains(&"address[city]") && keys.contains(&"items[1][price]") && keys.contains(&"expand[0]"));
        assert!(!keys.contains(&"nothing"));

        let components = json!({"schemas": {
            "Range": {"type": "object", "properties": {"gte": {"type": "integer"}}},
        }});
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"}, "active": {"type": "boolean"},
            "address": {"type": "object", "properties": {"city": {"type": "string"}, "line1": {"type": "string"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "price": {"type": "integer"},
                "tax_rates": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"enum": [""], "type": "string"}]},
            }}},
            "expand": {"type": "array", "items": {"type": "string"}},
            "created": {"anyOf": [{"$ref": "#/components/schemas/Range"}, {"type": "integer"}]},
            "due": {"anyOf": [{"$ref": "#/components/schemas/Range"}, {"type": "integer"}]},
        }});
        let read = typed(tree(written).unwrap(), &schema, &components);
        let mut expected = value.clone();
        expected.as_object_mut().unwrap().remove("nothing");
        assert_eq!(read, expected);

        // `a[]` appends; a single text where an array is described is an array of one.
        let read = typed(tree([("expand[]", "a"), ("expand[]", "b")]).unwrap(), &schema, &components);
        assert_eq!(read, json!({"expand": ["a", "b"]}));
        assert_eq!(typed(tree([("expand", "a")]).unwrap(), &schema, &components), json!({"expand": ["a"]}));
        // Text the schema does not make a number stays text, for the validator to refuse.
        assert_eq!(typed(tree([("age", "old")]).unwrap(), &schema, &components), json!({"age": "old"}));
        for bad in ["a[b", "a[b]c"] {
            let error = tree([(bad, "x"), ("a", "y")]).map(|_| ()).unwrap_err();
            assert!(error.key == bad && error.to_string().contains('`'), "{bad}: {error}");
        }
        assert_eq!(tree([("a", "x"), ("a[b]", "y")]).unwrap_err().why, "given a value and properties both");
        // A body's free-form property may be named so.
        assert_eq!(body_tree([("a[b", "x"), ("c[d]e", "y")]).unwrap(), json!({"a[b": "x", "c[d]e": "y"}));
    }
}

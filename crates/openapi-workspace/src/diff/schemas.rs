//! Two versions of a schema compared in one [`Direction`]: for what the client sends, every value
//! the base took must still be taken; for what it receives, every value the head may give must
//! be one the base could. Types (with `nullable`), enums, bounds, lengths, patterns, formats,
//! properties and `required`, `additionalProperties`, items, `allOf` parts (merged),
//! `oneOf`/`anyOf` arms (each arm of the side that must fit matched against the other side's
//! arms) and discriminators. `$ref`s are followed; a pair of references already being compared
//! is not compared again (recursive schemas end).

mod bounds;
mod merge;

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::{Change, Direction, Level, Rule, Side};
use crate::read::document::escape;
use crate::read::nullable::is_null_only;

/// Where a schema is in each document.
#[derive(Clone)]
pub(crate) struct At {
    pub base: String,
    pub head: String,
}

impl At {
    fn join(&self, base: &str, head: &str) -> At {
        At { base: format!("{}/{base}", self.base), head: format!("{}/{head}", self.head) }
    }

    fn both(&self, segment: &str) -> At {
        self.join(segment, segment)
    }
}

/// A pair of schemas an operation handed over (a parameter's, a body's): what the oracle checks
/// with values (read by nothing else, and kept only in builds that have the oracle).
#[cfg_attr(not(any(test, feature = "oracle")), allow(dead_code))]
pub(crate) struct Compared<'a> {
    pub base: Value,
    pub head: Value,
    pub sides: (Side<'a>, Side<'a>),
    pub at: At,
    pub direction: Direction,
}

/// A pair of components compared in a direction.
type Key = (String, String, Direction);

pub(crate) struct Schemas<'a> {
    base: Side<'a>,
    head: Side<'a>,
    /// Pairs of components under comparison, so recursive schemas end.
    seen: HashSet<Key>,
    /// Pairs of components already compared, and whether they broke: each is compared once
    /// (and its changes reported once, where it was first reached), however many operations
    /// and union arms reach it — without which large documents' unions cost exponential time.
    judged: HashMap<Key, bool>,
    reported: HashSet<Key>,
    /// Inside a trial comparison (`fits`), whose changes are counted and dropped.
    trying: usize,
    pub(super) changes: Vec<Change>,
    /// The pairs handed over by the operations, in order.
    pub(super) handed: Vec<Compared<'a>>,
}

impl<'a> Schemas<'a> {
    pub(super) fn new(base: Side<'a>, head: Side<'a>) -> Self {
        let (seen, judged, reported) = (HashSet::new(), HashMap::new(), HashSet::new());
        Self { base, head, seen, judged, reported, trying: 0, changes: Vec::new(), handed: Vec::new() }
    }

    /// [`Schemas::compare`] for a pair an operation hands over (not one reached inside another
    /// schema), kept in `handed` for the oracle.
    pub(super) fn compare_handed(&mut self, base: &Value, head: &Value, at: &At, direction: Direction, what: &str) {
        if cfg!(any(test, feature = "oracle")) {
            let sides = (self.base, self.head);
            self.handed.push(Compared { base: base.clone(), head: head.clone(), sides, at: at.clone(), direction });
        }
        self.compare(base, head, at, direction, what);
    }

    fn push(&mut self, level: Level, rule: Rule, at: &At, message: String) {
        let (base, head) = (Some(at.base.clone()), Some(at.head.clone()));
        self.changes.push(Change { level, rule, base, head, message });
    }

    /// Compares `base` (a schema of the base document) with `head` in `direction`; `what` names
    /// the value for the messages ("the body of POST /pets").
    pub(super) fn compare(&mut self, base: &Value, head: &Value, at: &At, direction: Direction, what: &str) {
        let (base, at_base) = resolved(base, self.base.components, &at.base);
        let (head, at_head) = resolved(head, self.head.components, &at.head);
        let at = At { base: at_base, head: at_head };
        let key = (at.base.clone(), at.head.clone(), direction);
        let component = at.base.starts_with("#/components/") && at.head.starts_with("#/components/");
        if component {
            match (self.trying > 0, self.judged.get(&key)) {
                (true, Some(&broke)) => {
                    if broke {
                        self.push(Level::Breaking, Rule::TypeNarrowed, &at, String::new());
                    }
                    return;
                }
                (false, Some(_)) if self.reported.contains(&key) => return,
                _ => {}
            }
            if !self.seen.insert(key.clone()) {
                return;
            }
        }
        let before = self.changes.len();
        let (Some(base), Some(head)) = (base.as_object(), head.as_object()) else { return };
        let (base, head) = (merge::merged(base, self.base.components), merge::merged(head, self.head.components));
        // A schema whose one value is `null` (the null arm of a nullable reference): all that
        // matters is whether the other side takes `null`.
        let (narrow, wide) = match direction {
            Direction::Sent => (&base, &head),
            Direction::Received => (&head, &base),
        };
        if is_null_only(&Value::Object(narrow.clone())) {
            if !self.takes_null(wide) {
                let (rule, message) = null_lost(direction, what);
                self.push(Level::Breaking, rule, &at, message);
            }
        } else {
            match (arms(&base), arms(&head)) {
                (None, None) => self.plain(&base, &head, &at, direction, what),
                (base_arms, head_arms) => self.unions(&base, base_arms, &head, head_arms, &at, direction, what),
            }
        }
        if component {
            self.seen.remove(&key);
            let broke = self.changes[before..].iter().any(|change| change.level == Level::Breaking);
            self.judged.insert(key.clone(), broke);
            if self.trying == 0 {
                self.reported.insert(key);
            }
        }
    }

    /// The components of the base document (`base`) or of the head.
    fn components(&self, base: bool) -> &'a Value {
        if base { self.base.components } else { self.head.components }
    }

    /// Whether a schema (of either side) takes `null`: by its type, or by one of its arms.
    fn takes_null(&self, schema: &Map<String, Value>) -> bool {
        let components = [self.base.components, self.head.components];
        types(schema).is_none_or(|types| types.contains("null"))
            || arms(schema).is_some_and(|(_, arms)| {
                arms.iter().any(|arm| {
                    components.iter().any(|components| {
                        let (arm, _) = resolved(arm, components, "");
                        arm.as_object().is_some_and(|arm| types(arm).is_none_or(|types| types.contains("null")))
                    })
                })
            })
    }

    /// Whether `head` takes (or, received, gives only) what `base` did: a comparison whose
    /// changes are counted, not kept.
    fn fits(&mut self, base: &Value, head: &Value, at: &At, direction: Direction) -> bool {
        let kept = std::mem::take(&mut self.changes);
        self.trying += 1;
        self.compare(base, head, at, direction, "");
        self.trying -= 1;
        let breaks = self.changes.iter().any(|change| change.level == Level::Breaking);
        self.changes = kept;
        !breaks
    }

    /// A union on either side. Sent: each base arm must be taken by some head arm. Received: each
    /// head arm must fit some base arm. An arm matched by its reference is compared in detail.
    #[allow(clippy::too_many_arguments)]
    fn unions(
        &mut self,
        base: &Map<String, Value>,
        base_arms: Option<(&'static str, &Vec<Value>)>,
        head: &Map<String, Value>,
        head_arms: Option<(&'static str, &Vec<Value>)>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        let whole = |schema: &Map<String, Value>| vec![Value::Object(schema.clone())];
        let (base_list, base_key) = match base_arms {
            Some((key, arms)) => (arms.clone(), Some(key)),
            None => (whole(base), None),
        };
        let (head_list, head_key) = match head_arms {
            Some((key, arms)) => (arms.clone(), Some(key)),
            None => (whole(head), None),
        };
        let arm_at = |key: Option<&str>, i: usize| key.map(|key| format!("/{key}/{i}")).unwrap_or_default();
        let (must, within, must_key, within_key, must_is_base) = match direction {
            Direction::Sent => (&base_list, &head_list, base_key, head_key, true),
            Direction::Received => (&head_list, &base_list, head_key, base_key, false),
        };
        for (i, arm) in must.iter().enumerate() {
            let same = within.iter().position(|other| same_reference(arm, other));
            let place = |j: usize| match must_is_base {
                true => At {
                    base: format!("{}{}", at.base, arm_at(must_key, i)),
                    head: format!("{}{}", at.head, arm_at(within_key, j)),
                },
                false => At {
                    base: format!("{}{}", at.base, arm_at(within_key, j)),
                    head: format!("{}{}", at.head, arm_at(must_key, i)),
                },
            };
            let pair = |j: usize| match must_is_base {
                true => (arm.clone(), within[j].clone()),
                false => (within[j].clone(), arm.clone()),
            };
            if let Some(j) = same {
                let (b, h) = pair(j);
                self.compare(&b, &h, &place(j), direction, what);
                continue;
            }
            let fitting = (0..within.len()).find(|&j| {
                let (b, h) = pair(j);
                self.fits(&b, &h, &place(j), direction)
            });
            let null = is_null_only(resolved(arm, self.components(must_is_base), "").0);
            if fitting.is_none() && null {
                let (rule, message) = null_lost(direction, what);
                self.push(Level::Breaking, rule, &place(0), message);
            } else if fitting.is_none() {
                let at = place(0);
                match direction {
                    Direction::Sent => self.push(
                        Level::Breaking,
                        Rule::UnionArmRemoved,
                        &at,
                        format!("{what}: a value the base took (its arm {i}) no longer fits any arm of the head"),
                    ),
                    Direction::Received => self.push(
                        Level::Breaking,
                        Rule::UnionArmAdded,
                        &at,
                        format!("{what}: the head may answer a value (its arm {i}) that fits no arm the base had"),
                    ),
                }
            }
        }
        let (base_tag, head_tag) = (discriminator(base), discriminator(head));
        if base_tag.is_some() && base_tag != head_tag {
            let message = format!("{what}: the discriminator was {base_tag:?}, it is {head_tag:?}");
            self.push(Level::Breaking, Rule::DiscriminatorChanged, at, message);
        }
    }

    fn plain(
        &mut self,
        base: &Map<String, Value>,
        head: &Map<String, Value>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        self.types(base, head, at, direction, what);
        self.enums(base, head, at, direction, what);
        self.bounds(base, head, at, direction, what);
        self.objects(base, head, at, direction, what);
        if let (Some(b), Some(h)) = (base.get("items"), head.get("items")) {
            self.compare(b, h, &at.both("items"), direction, &format!("{what} (its items)"));
        }
    }

    fn types(
        &mut self,
        base: &Map<String, Value>,
        head: &Map<String, Value>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        let (base_types, head_types) = (types(base), types(head));
        let (from, to) = match direction {
            Direction::Sent => (&base_types, &head_types),
            Direction::Received => (&head_types, &base_types),
        };
        // `None` is any type: it takes everything and may give anything.
        let lost: Vec<&str> = match (from, to) {
            (_, None) => Vec::new(),
            (None, Some(_)) => vec!["value of another type"],
            (Some(from), Some(to)) => from.iter().copied().filter(|t| !taken(t, to)).collect(),
        };
        for lost in lost {
            let (rule, message) = match (direction, lost) {
                (_, "null") => null_lost(direction, what),
                (Direction::Sent, _) => (Rule::TypeNarrowed, format!("{what}: a {lost} is no longer taken")),
                (Direction::Received, _) => (Rule::TypeWidened, format!("{what}: it may now be a {lost}")),
            };
            self.push(Level::Breaking, rule, at, message);
        }
    }

    fn enums(
        &mut self,
        base: &Map<String, Value>,
        head: &Map<String, Value>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        let (base_values, head_values) =
            (base.get("enum").and_then(Value::as_array), head.get("enum").and_then(Value::as_array));
        match (direction, base_values, head_values) {
            (Direction::Sent, Some(base_values), Some(head_values)) => {
                for value in base_values.iter().filter(|v| !head_values.contains(v)) {
                    let message = format!("{what}: the value {value} is no longer taken");
                    self.push(Level::Breaking, Rule::EnumValueRemoved, at, message);
                }
            }
            (Direction::Sent, None, Some(_)) => {
                let message = format!("{what}: only the listed values are taken now");
                self.push(Level::Breaking, Rule::EnumAdded, at, message);
            }
            (Direction::Received, Some(base_values), Some(head_values)) => {
                for value in head_values.iter().filter(|v| !base_values.contains(v)) {
                    let message = format!(
                        "{what}: the value {value} is new; a client that does not take unknown values fails on it"
                    );
                    self.push(Level::Warning, Rule::EnumValueAdded, at, message);
                }
            }
            (Direction::Received, Some(_), None) => {
                let message = format!("{what}: any value may come now, not only the listed ones");
                self.push(Level::Warning, Rule::EnumValueAdded, at, message);
            }
            _ => {}
        }
    }

    fn objects(
        &mut self,
        base: &Map<String, Value>,
        head: &Map<String, Value>,
        at: &At,
        direction: Direction,
        what: &str,
    ) {
        let empty = Map::new();
        let properties = |schema: &Map<String, Value>| schema.get("properties").and_then(Value::as_object).cloned();
        let (base_properties, head_properties) = (properties(base), properties(head));
        let required = crate::read::document::required_names;
        let (base_required, head_required) = (required(base), required(head));
        let closed = |schema: &Map<String, Value>| schema.get("additionalProperties") == Some(&Value::Bool(false));
        let (base_closed, head_closed) = (closed(base), closed(head));
        let (bp, hp) = (base_properties.as_ref().unwrap_or(&empty), head_properties.as_ref().unwrap_or(&empty));
        // Properties the client never sends (`readOnly`) or never receives (`writeOnly`).
        let unseen = |schema: &Value, components: &Value| {
            let (schema, _) = resolved(schema, components, "");
            direction.never_carries(schema)
        };
        let names: BTreeSet<&String> = bp.keys().chain(hp.keys()).collect();
        for name in names {
            let segment = format!("properties/{}", escape(name));
            let field = format!("{what}: property `{name}`");
            match (bp.get(name), hp.get(name)) {
                (Some(b), Some(h)) => {
                    if unseen(b, self.base.components) && unseen(h, self.head.components) {
                        continue;
                    }
                    let at = at.both(&segment);
                    match direction {
                        Direction::Sent if head_required.contains(name) && !base_required.contains(name) => {
                            let message = format!("{field} is now required");
                            self.push(Level::Breaking, Rule::PropertyNowRequired, &at, message);
                        }
                        Direction::Received if base_required.contains(name) && !head_required.contains(name) => {
                            let message = format!("{field} may now be missing");
                            self.push(Level::Breaking, Rule::PropertyNoLongerRequired, &at, message);
                        }
                        _ => {}
                    }
                    self.compare(b, h, &at, direction, &field);
                }
                (Some(b), None) => {
                    if unseen(b, self.base.components) {
                        continue;
                    }
                    let at = At { base: format!("{}/{segment}", at.base), head: at.head.clone() };
                    let (level, message) = match direction {
                        Direction::Sent if head_closed => {
                            (Level::Breaking, format!("{field} was removed: a client sending it is refused"))
                        }
                        Direction::Sent => {
                            (Level::Warning, format!("{field} was removed: what a client sends in it is ignored"))
                        }
                        Direction::Received if base_required.contains(name) => {
                            (Level::Breaking, format!("{field} was removed, though clients were promised it"))
                        }
                        Direction::Received => (Level::Warning, format!("{field} was removed")),
                    };
                    self.push(level, Rule::PropertyRemoved, &at, message);
                }
                (None, Some(h)) => {
                    if unseen(h, self.head.components) {
                        continue;
                    }
                    let at = At { base: at.base.clone(), head: format!("{}/{segment}", at.head) };
                    let (level, rule, message) = match direction {
                        Direction::Sent if head_required.contains(name) => {
                            (Level::Breaking, Rule::PropertyAddedRequired, format!("{field} is new and required"))
                        }
                        Direction::Sent => (Level::Info, Rule::PropertyAdded, format!("{field} is new")),
                        Direction::Received if base_closed => (
                            Level::Warning,
                            Rule::PropertyAdded,
                            format!("{field} is new, where the base allowed no other property"),
                        ),
                        Direction::Received => (Level::Info, Rule::PropertyAdded, format!("{field} is new")),
                    };
                    self.push(level, rule, &at, message);
                }
                (None, None) => {}
            }
        }
        match direction {
            Direction::Sent if head_closed && !base_closed => {
                let message = format!("{what}: properties the document does not name are now refused");
                self.push(
                    Level::Breaking,
                    Rule::AdditionalPropertiesRefused,
                    &at.both("additionalProperties"),
                    message,
                );
            }
            Direction::Received if base_closed && !head_closed => {
                let message = format!("{what}: properties the document does not name may now come");
                self.push(Level::Warning, Rule::AdditionalPropertiesAllowed, &at.both("additionalProperties"), message);
            }
            _ => {}
        }
        // Other properties' schema: absent or `true` is any value (`false` is judged above).
        let others = |schema: &Map<String, Value>| match schema.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Some(Value::Object(Map::new())),
            Some(schema @ Value::Object(_)) => Some(schema.clone()),
            Some(_) => None,
        };
        let typed = |schema: &Map<String, Value>| matches!(schema.get("additionalProperties"), Some(Value::Object(_)));
        if let (Some(b), Some(h)) = (others(base), others(head))
            && (typed(base) || typed(head))
        {
            self.compare(
                &b,
                &h,
                &at.both("additionalProperties"),
                direction,
                &format!("{what} (its other properties)"),
            );
        }
    }
}

/// The change where `null` fits one side and not the other: no longer taken from a client, or
/// newly possible for one.
fn null_lost(direction: Direction, what: &str) -> (Rule, String) {
    match direction {
        Direction::Sent => (Rule::NullableRemoved, format!("{what}: `null` is no longer taken")),
        Direction::Received => (Rule::NullableAdded, format!("{what}: it may now be `null`")),
    }
}

/// `schema` through its `$ref`s, and its pointer (the component's, once a reference was followed).
fn resolved<'v>(schema: &'v Value, components: &'v Value, at: &str) -> (&'v Value, String) {
    let mut schema = schema;
    let mut at = at.to_owned();
    for _ in 0..16 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else { break };
        let Some(name) = reference.strip_prefix("#/components/schemas/") else { break };
        let Some(target) = components.get("schemas").and_then(|schemas| schemas.get(name)) else { break };
        at = format!("#/components/schemas/{name}");
        schema = target;
    }
    (schema, at)
}

/// The union keyword and arms of a schema that is a `oneOf`/`anyOf`.
fn arms(schema: &Map<String, Value>) -> Option<(&'static str, &Vec<Value>)> {
    ["oneOf", "anyOf"]
        .into_iter()
        .find_map(|key| Some((key, schema.get(key)?.as_array().filter(|arms| !arms.is_empty())?)))
}

fn same_reference(a: &Value, b: &Value) -> bool {
    let reference = |v: &Value| v.get("$ref").and_then(Value::as_str).map(str::to_owned);
    reference(a).is_some() && reference(a) == reference(b)
}

fn discriminator(schema: &Map<String, Value>) -> Option<String> {
    schema.get("discriminator")?.get("propertyName")?.as_str().map(str::to_owned)
}

/// The JSON types a schema allows (`nullable` as `null`); `None` for any.
fn types(schema: &Map<String, Value>) -> Option<BTreeSet<&'static str>> {
    const ALL: [&str; 7] = ["string", "number", "integer", "boolean", "array", "object", "null"];
    let written: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        // An enum without a type takes the types of its values.
        _ => match schema.get("enum").and_then(Value::as_array) {
            Some(values) => values.iter().map(type_of).collect(),
            None => return None,
        },
    };
    let mut set: BTreeSet<&'static str> = ALL.into_iter().filter(|t| written.contains(t)).collect();
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        set.insert("null");
    }
    Some(set)
}

/// The JSON type of a value (a whole number is an integer).
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value of type `t` is taken by a schema of `types` (an integer is a number).
fn taken(t: &str, types: &BTreeSet<&str>) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

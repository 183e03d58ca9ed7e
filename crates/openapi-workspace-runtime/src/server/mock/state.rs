//! The mock's state (`--stateful`): what a `POST` to a collection creates, a `GET` of its item
//! finds, a `PUT` replaces, a `PATCH` merges into and a `DELETE` removes; a `GET` of the
//! collection lists what is there, newest first. Which operations do so, and with what id, is
//! the plan's (`ResourcePlan`, inferred by the generator); the values are the requests' bodies
//! over the document's example, held in memory for as long as the mock runs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::plan::{IdKind, ResourcePlan, Role};

/// A resource (its index in the plan) in a scope.
type Scoped = (usize, Vec<String>);

/// A collection's items, each with its id, oldest first.
type Items = Vec<(String, Value)>;

/// Every resource's items, by resource and scope (the values of its collection path's
/// parameters: a pet of owner 1 is not one of owner 2).
#[derive(Default)]
pub(super) struct State {
    collections: Mutex<HashMap<Scoped, Items>>,
    sequence: AtomicU64,
}

/// What an operation's role made of the request.
pub(super) enum Done {
    /// This value, answered in the operation's documented success.
    Value(Value),
    /// Its documented success as the document gives it (a `DELETE`'s).
    Documented,
    /// No item of that id (in that scope): `404`.
    NotFound(String),
    /// What the state would answer does not meet the documented schema (why): nothing changed,
    /// and the documented answer is sent.
    Unfit(String),
}

/// A request as the state reads it: its resource's scope and id (path parameters' texts), its
/// JSON body, its query pairs, and the document's example of the operation's answer.
pub(super) struct Request {
    pub scope: Vec<String>,
    pub id: Option<String>,
    pub body: Option<Value>,
    pub query: Vec<(String, String)>,
    pub example: Option<Value>,
}

impl State {
    /// `request` done as `role` says to `resource` (the plan's `index`th), if what it answers
    /// passes `check` (the documented schema): else nothing changes.
    pub(super) fn apply(
        &self,
        (index, resource): (usize, &ResourcePlan),
        role: Role,
        request: Request,
        check: impl Fn(&Value) -> Result<(), String>,
    ) -> Done {
        let mut collections = self.collections.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let items = collections.entry((index, request.scope)).or_default();
        let found = |id: &str| items.iter().position(|(key, _)| key == id);
        match role {
            Role::Create => {
                let id = self.next_id(resource.id_kind);
                let mut item = object(request.example);
                item.extend(settable(resource, request.body));
                item.insert(resource.id_property.clone(), id_value(resource.id_kind, &id));
                let now = Value::String(now());
                for stamp in resource.created.iter().chain(&resource.updated) {
                    item.insert(stamp.clone(), now.clone());
                }
                let item = Value::Object(item);
                if let Err(why) = check(&item) {
                    return Done::Unfit(why);
                }
                items.push((id, item.clone()));
                Done::Value(item)
            }
            Role::Read => match request.id.as_deref().and_then(found) {
                Some(at) => checked(items[at].1.clone(), check),
                None => not_found(resource, request.id),
            },
            Role::Replace | Role::Merge => {
                let Some(at) = request.id.as_deref().and_then(found) else { return not_found(resource, request.id) };
                let stored = object(Some(items[at].1.clone()));
                let mut item = match role {
                    Role::Replace => {
                        // What the server owns stays: the id and when it was made.
                        let mut kept: Map<String, Value> = settable(resource, request.body);
                        for owned in std::iter::once(&resource.id_property).chain(&resource.created) {
                            if let Some(value) = stored.get(owned) {
                                kept.insert(owned.clone(), value.clone());
                            }
                        }
                        kept
                    }
                    _ => {
                        let mut merged = Value::Object(stored);
                        merge_patch(&mut merged, Value::Object(settable(resource, request.body)));
                        object(Some(merged))
                    }
                };
                item.insert(resource.id_property.clone(), items[at].1[&resource.id_property].clone());
                for stamp in &resource.updated {
                    item.insert(stamp.clone(), Value::String(now()));
                }
                let item = Value::Object(item);
                if let Err(why) = check(&item) {
                    return Done::Unfit(why);
                }
                items[at].1 = item.clone();
                Done::Value(item)
            }
            Role::Delete => match request.id.as_deref().and_then(found) {
                Some(at) => {
                    items.remove(at);
                    Done::Documented
                }
                None => not_found(resource, request.id),
            },
            Role::List => {
                // A query parameter that names a property of the items keeps those whose
                // property is that text; the others (paging, sorting) do not filter.
                let kept: Vec<Value> = items
                    .iter()
                    .rev()
                    .map(|(_, item)| item)
                    .filter(|item| {
                        request.query.iter().all(|(name, text)| match item.get(name) {
                            Some(Value::String(value)) => value == text,
                            Some(value @ (Value::Number(_) | Value::Bool(_))) => {
                                serde_json::from_str::<Value>(text).is_ok_and(|given| given == *value)
                            }
                            _ => true,
                        })
                    })
                    .cloned()
                    .collect();
                checked(listed(resource, kept, request.example), check)
            }
        }
    }

    fn next_id(&self, kind: IdKind) -> String {
        let n = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        match kind {
            IdKind::Uuid => uuid::Uuid::new_v4().to_string(),
            IdKind::Integer | IdKind::Text => n.to_string(),
        }
    }
}

/// `items` as the list operation answers them: bare, or in the array property of its
/// documented object (its other fields as the example has them, counts made true).
fn listed(resource: &ResourcePlan, items: Vec<Value>, example: Option<Value>) -> Value {
    let Some(property) = &resource.list_property else { return Value::Array(items) };
    let mut page = object(example);
    let count = items.len();
    page.insert(property.clone(), Value::Array(items));
    for (name, value) in page.iter_mut() {
        let name = name.to_ascii_lowercase();
        if name.starts_with("has_more") || name == "hasmore" || name == "has_next" || name == "hasnext" {
            *value = Value::Bool(false);
        } else if value.is_number() && matches!(name.as_str(), "total" | "total_count" | "totalcount" | "count") {
            *value = Value::from(count);
        }
    }
    Value::Object(page)
}

/// `value`, when it passes `check`.
fn checked(value: Value, check: impl Fn(&Value) -> Result<(), String>) -> Done {
    match check(&value) {
        Ok(()) => Done::Value(value),
        Err(why) => Done::Unfit(why),
    }
}

/// The fields of a request's body the item keeps: the item's properties a client may set (a
/// field only the request has, `wait`, or one never answered, a write-only `secret`, is not).
fn settable(resource: &ResourcePlan, body: Option<Value>) -> Map<String, Value> {
    let mut fields = object(body);
    if let Some(settable) = &resource.fields {
        fields.retain(|name, _| settable.contains(name));
    }
    fields
}

fn not_found(resource: &ResourcePlan, id: Option<String>) -> Done {
    Done::NotFound(format!("no {} {}", resource.name, id.unwrap_or_default()))
}

fn object(value: Option<Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    }
}

fn id_value(kind: IdKind, id: &str) -> Value {
    match kind {
        IdKind::Integer => id.parse::<u64>().map(Value::from).unwrap_or_else(|_| Value::String(id.to_owned())),
        IdKind::Uuid | IdKind::Text => Value::String(id.to_owned()),
    }
}

/// RFC 7386 JSON merge patch: `patch`'s members set, `null`s remove, objects merge.
fn merge_patch(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let fields = target.as_object_mut().expect("made an object above");
    for (key, value) in patch {
        if value.is_null() {
            fields.remove(&key);
        } else {
            merge_patch(fields.entry(key).or_insert(Value::Null), value);
        }
    }
}

/// Now, as an RFC 3339 date-time in UTC to the second.
fn now() -> String {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3_600, rest % 3_600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_merge_patch_sets_removes_and_merges() {
        let mut target = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": 4});
        super::merge_patch(&mut target, json!({"a": 5, "b": {"c": null, "f": 6}, "e": null}));
        assert_eq!(target, json!({"a": 5, "b": {"d": 3, "f": 6}}));
    }

    #[test]
    fn now_is_a_date_time() {
        let now = super::now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }
}

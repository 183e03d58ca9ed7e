//! The mock's state (`--stateful`): what a `POST` to a collection creates, a `GET` of its item
//! finds, a `PUT` replaces, a `PATCH` merges into and a `DELETE` removes; a `GET` of the
//! collection lists what is there, newest first. Which operations do so, and with what id, is
//! the plan's (`ResourcePlan`, inferred by the generator); the values are the requests' bodies
//! over the document's example, held in memory for as long as the mock runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::OptionsError;
use super::pages::{self, Listing};
use super::patch;
use super::plan::{IdKind, Plan, ResourcePlan, Role, StatePlan};

/// A resource (its index in the plan) in a scope.
type Scoped = (usize, Vec<String>);

/// A collection's items, each with its id, oldest first.
type Items = Vec<(String, Value)>;

/// An item the state starts with (and starts again with at a reset): its resource, scope and
/// value.
pub(super) type Seed = (usize, Vec<String>, Value);

/// Every resource's items, by resource and scope (the values of its collection path's
/// parameters: a pet of owner 1 is not one of owner 2), and the answers given to each
/// idempotency key.
pub(super) struct State {
    held: Mutex<Held>,
    seeds: Vec<Seed>,
    /// Where each change is written before it is made, when kept beyond memory.
    keep: Option<Arc<dyn Keep>>,
}

/// What a stateful mock's items are kept in beyond memory (`openapi-workspace mock --database`'s
/// SQLite file). Each change is written before it is made in memory and answered, under the
/// state's lock: one that cannot be written is not made (`503`).
pub trait Keep: Send + Sync + std::fmt::Debug {
    /// What was kept, oldest first; `None` when nothing ever was (the seeds are then).
    fn load(&self) -> Result<Option<Kept>, KeepError>;
    /// Everything forgotten, and `items` kept (the seeds, at a reset).
    fn reset(&self, items: &[KeptItem]) -> Result<(), KeepError>;
    /// One change, whole or not at all.
    fn change(&self, change: Change<'_>) -> Result<(), KeepError>;
}

/// Everything a [`Keep`] held.
#[derive(Debug, Default)]
pub struct Kept {
    pub items: Vec<KeptItem>,
    /// By collection route and key: the body first sent with it, and what was answered.
    pub keys: Vec<(String, String, Option<Value>, Value)>,
}

/// An item, by its collection's route, its scope and id.
#[derive(Debug, Clone)]
pub struct KeptItem {
    pub collection: String,
    pub scope: Vec<String>,
    pub id: String,
    pub value: Value,
}

/// A change to what is kept.
#[derive(Debug)]
pub enum Change<'a> {
    /// An item made or changed, with the idempotency key (and the body sent with it) it was
    /// made with.
    Put { item: &'a KeptItem, key: Option<(&'a str, &'a Option<Value>)> },
    /// An item removed, and with it every item of these collections whose scope begins with
    /// `under` (its own scope and id: what was nested under it).
    Remove { collection: &'a str, scope: &'a [String], id: &'a str, nested: Vec<&'a str>, under: &'a [String] },
}

/// Why a change could not be kept.
#[derive(Debug)]
pub struct KeepError(pub String);

impl std::fmt::Display for KeepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeepError {}

#[derive(Default)]
struct Held {
    collections: HashMap<Scoped, Items>,
    /// By resource and key: the body sent with the key first, and what it was answered.
    keys: HashMap<(usize, String), (Option<Value>, Value)>,
    /// By resource: the last id of its sequence.
    sequences: HashMap<usize, u64>,
}

/// What an operation's role made of the request.
pub(super) enum Done {
    /// This value, answered in the operation's documented success (with this `Link` header).
    Value(Value, Option<String>),
    /// Its documented success as the document gives it (a `DELETE`'s; an action's whose answer
    /// is not the item).
    Documented,
    /// No item of that id (in that scope): `404`.
    NotFound(String),
    /// What the state would answer does not meet the documented schema (why): nothing changed,
    /// and the documented answer is sent.
    Unfit(String),
    /// The request conflicts with the state (why): an idempotency key sent again with another
    /// body, an id the client chose that another item has, a JSON Patch that does not apply.
    /// `409`, nothing done.
    Conflict(String),
    /// The change could not be kept (why): `503`, nothing done.
    NotKept(String),
}

/// A request as the state reads it: its resource's scope and id (path parameters' texts), its
/// JSON body, its query pairs, its idempotency key, its URL less the query, and the document's
/// example of the operation's answer.
pub(super) struct Request {
    pub scope: Vec<String>,
    pub id: Option<String>,
    pub body: Option<Value>,
    pub query: Vec<(String, String)>,
    pub key: Option<String>,
    pub url: String,
    pub example: Option<Value>,
}

impl State {
    /// A state holding what `keep` kept, else `seeds` (each with its resource's plan, which says
    /// where its id is).
    pub(super) fn new(
        resources: &[ResourcePlan],
        seeds: Vec<Seed>,
        keep: Option<Arc<dyn Keep>>,
    ) -> Result<Self, KeepError> {
        let kept = match &keep {
            Some(keep) => keep.load()?,
            None => None,
        };
        let state = State { held: Mutex::default(), seeds, keep };
        match kept {
            Some(kept) => *state.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = held(resources, kept),
            None => state.reset(resources)?,
        }
        Ok(state)
    }

    /// Everything forgotten but the seeds.
    pub(super) fn reset(&self, resources: &[ResourcePlan]) -> Result<(), KeepError> {
        let mut held = Held::default();
        for (index, scope, item) in &self.seeds {
            let resource = &resources[*index];
            let id = match item.get(&resource.id_property) {
                Some(Value::String(id)) => id.clone(),
                Some(Value::Number(id)) => {
                    held.goes_on_after(*index, id.as_u64().unwrap_or(0));
                    id.to_string()
                }
                _ => held.next_id(*index, resource.id_kind),
            };
            let mut item = item.clone();
            if let Value::Object(fields) = &mut item {
                fields.insert(resource.id_property.clone(), id_value(resource.id_kind, &id));
            }
            held.collections.entry((*index, scope.clone())).or_default().push((id, item));
        }
        let mut kept = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(keep) = &self.keep {
            let items: Vec<KeptItem> = held
                .collections
                .iter()
                .flat_map(|((index, scope), items)| {
                    items.iter().map(|(id, value)| KeptItem {
                        collection: resources[*index].collection.clone(),
                        scope: scope.clone(),
                        id: id.clone(),
                        value: value.clone(),
                    })
                })
                .collect();
            keep.reset(&items)?;
        }
        *kept = held;
        Ok(())
    }

    /// `change` kept, where the state is kept beyond memory.
    fn kept(&self, change: Change<'_>) -> Result<(), Done> {
        match &self.keep {
            Some(keep) => keep.change(change).map_err(|error| Done::NotKept(error.0)),
            None => Ok(()),
        }
    }

    /// `request` done as `part` says to `resource`, if what it answers passes `check` (the
    /// documented schema): else nothing changes.
    pub(super) fn apply(
        &self,
        resources: &[ResourcePlan],
        part: &StatePlan,
        request: Request,
        check: impl Fn(&Value) -> Result<(), String>,
    ) -> Done {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Held { collections, keys, sequences } = &mut *held;
        let key = request.key.map(|key| (part.resource, key));
        if let Some((sent, answered)) = key.as_ref().and_then(|key| keys.get(key)) {
            return match *sent == request.body {
                true => Done::Value(answered.clone(), None),
                false => Done::Conflict(format!(
                    "the idempotency key {} was sent before with another body",
                    key.as_ref().map_or("", |(_, key)| key.as_str())
                )),
            };
        }
        let resource = &resources[part.resource];
        // A nested resource's list is its parent item's: none without it (`/owners/9/pets`
        // after owner 9 is deleted is `404`, not an empty list).
        if let (Some(parent), Some((id, scope))) = (resource.parent, request.scope.split_last()) {
            let held = collections.get(&(parent, scope.to_vec()));
            if !held.is_some_and(|items| items.iter().any(|(key, _)| key == id)) {
                return Done::NotFound(format!("no {} {id}", resources[parent].name));
            }
        }
        let scope = request.scope.clone();
        let items = collections.entry((part.resource, request.scope)).or_default();
        let found = |id: &str| items.iter().position(|(key, _)| key == id);
        match part.role {
            Role::Create => {
                // A text id the client chose (a slug, a name) is the item's, if no other has it.
                let chosen = match (resource.id_kind, request.body.as_ref().and_then(|b| b.get(&resource.id_property)))
                {
                    (IdKind::Text, Some(Value::String(id))) if !id.is_empty() => Some(id.clone()),
                    _ => None,
                };
                if let Some(id) = chosen.as_deref().filter(|id| found(id).is_some()) {
                    return Done::Conflict(format!("{} {id} exists already", resource.name));
                }
                let id = chosen.unwrap_or_else(|| next_id(sequences, part.resource, resource.id_kind));
                let mut item = object(request.example);
                item.extend(settable(resource, request.body.clone()));
                item.insert(resource.id_property.clone(), id_value(resource.id_kind, &id));
                let now = Value::String(now());
                for stamp in resource.created.iter().chain(&resource.updated) {
                    item.insert(stamp.clone(), now.clone());
                }
                let item = Value::Object(item);
                if let Err(why) = check(&item) {
                    return Done::Unfit(why);
                }
                let kept = KeptItem { collection: resource.collection.clone(), scope, id, value: item };
                let sent = key.as_ref().map(|(_, key)| (key.as_str(), &request.body));
                if let Err(failed) = self.kept(Change::Put { item: &kept, key: sent }) {
                    return failed;
                }
                items.push((kept.id, kept.value.clone()));
                if let Some(key) = key {
                    keys.insert(key, (request.body, kept.value.clone()));
                }
                Done::Value(kept.value, None)
            }
            Role::Read => match request.id.as_deref().and_then(found) {
                Some(at) => checked(items[at].1.clone(), check),
                None => not_found(resource, request.id),
            },
            Role::Replace | Role::Merge | Role::Action => {
                let Some(at) = request.id.as_deref().and_then(found) else { return not_found(resource, request.id) };
                let stored = object(Some(items[at].1.clone()));
                let mut item = match part.role {
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
                    // A JSON Patch (an array of operations), else a merge patch.
                    Role::Merge if request.body.as_ref().is_some_and(Value::is_array) => {
                        let mut patched = Value::Object(stored);
                        let operations = request.body.as_ref().and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                        if let Err(why) = patch::json_patch(&mut patched, operations) {
                            return Done::Conflict(why);
                        }
                        let mut patched = object(Some(patched));
                        if let Some(settable) = &resource.fields {
                            patched.retain(|name, _| settable.contains(name) || name == &resource.id_property);
                        }
                        patched
                    }
                    Role::Merge => {
                        let mut merged = Value::Object(stored);
                        patch::merge_patch(&mut merged, Value::Object(settable(resource, request.body)));
                        object(Some(merged))
                    }
                    _ => {
                        let mut changed = stored;
                        if let Some((property, value)) = &part.set {
                            changed.insert(property.clone(), value.clone());
                        }
                        changed
                    }
                };
                item.insert(resource.id_property.clone(), items[at].1[&resource.id_property].clone());
                for stamp in &resource.updated {
                    item.insert(stamp.clone(), Value::String(now()));
                }
                let item = Value::Object(item);
                let answered = match (check(&item), part.role) {
                    (Ok(()), _) => Done::Value(item.clone(), None),
                    // An action whose answer is not the item (a job, an empty `202`) still acts.
                    (Err(_), Role::Action) => Done::Documented,
                    (Err(why), _) => return Done::Unfit(why),
                };
                let kept =
                    KeptItem { collection: resource.collection.clone(), scope, id: items[at].0.clone(), value: item };
                if let Err(failed) = self.kept(Change::Put { item: &kept, key: None }) {
                    return failed;
                }
                items[at].1 = kept.value;
                answered
            }
            Role::Delete => match request.id.as_deref().and_then(found) {
                Some(at) => {
                    // What was nested under it goes with it.
                    let mut under = scope.clone();
                    under.push(items[at].0.clone());
                    let nested = (0..resources.len())
                        .filter(|&index| descends(resources, index, part.resource))
                        .map(|index| resources[index].collection.as_str())
                        .collect();
                    let (collection, id) = (resource.collection.as_str(), items[at].0.as_str());
                    let removed = Change::Remove { collection, scope: &scope, id, nested, under: &under };
                    if let Err(failed) = self.kept(removed) {
                        return failed;
                    }
                    items.remove(at);
                    collections.retain(|(index, scope), _| {
                        !(scope.starts_with(&under) && descends(resources, *index, part.resource))
                    });
                    Done::Documented
                }
                None => not_found(resource, request.id),
            },
            Role::List => {
                let newest_first = items.iter().rev().map(|(id, item)| (id.as_str(), item)).collect();
                let listing = Listing { query: &request.query, url: &request.url, example: request.example };
                let page = pages::page(resource, newest_first, listing);
                match check(&page.value) {
                    Ok(()) => Done::Value(page.value, page.link),
                    Err(why) => Done::Unfit(why),
                }
            }
        }
    }
}

/// The state `kept` holds: each item under its resource (one the plan no longer has is
/// dropped), each sequence going on after the largest id kept.
fn held(resources: &[ResourcePlan], kept: Kept) -> Held {
    let mut held = Held::default();
    let index_of = |collection: &str| resources.iter().position(|resource| resource.collection == collection);
    for item in kept.items {
        let Some(index) = index_of(&item.collection) else { continue };
        if let Ok(number) = item.id.parse::<u64>() {
            held.goes_on_after(index, number);
        }
        held.collections.entry((index, item.scope)).or_default().push((item.id, item.value));
    }
    for (collection, key, body, answer) in kept.keys {
        if let Some(index) = index_of(&collection) {
            held.keys.insert((index, key), (body, answer));
        }
    }
    held
}

impl Held {
    fn next_id(&mut self, index: usize, kind: IdKind) -> String {
        next_id(&mut self.sequences, index, kind)
    }

    /// Resource `index`'s sequence going on after `id` (one seeded or kept), if it is not past it.
    fn goes_on_after(&mut self, index: usize, id: u64) {
        let last = self.sequences.entry(index).or_default();
        *last = (*last).max(id);
    }
}

/// A new id for an item of resource `index`: a UUID, or the next of its sequence (1, 2, 3…).
fn next_id(sequences: &mut HashMap<usize, u64>, index: usize, kind: IdKind) -> String {
    match kind {
        IdKind::Uuid => uuid::Uuid::new_v4().to_string(),
        IdKind::Integer | IdKind::Text => {
            let last = sequences.entry(index).or_default();
            *last += 1;
            last.to_string()
        }
    }
}

/// The items `seed` says a stateful mock of `plan` starts with.
pub(super) fn seeds(plan: &Plan, seed: &super::Seed) -> Result<Vec<Seed>, OptionsError> {
    match seed {
        super::Seed::Nothing => Ok(Vec::new()),
        // An example of a nested resource's item belongs to no scope the document names.
        super::Seed::Examples => Ok((0..plan.resources.len())
            .filter(|&index| plan.resources[index].scope.is_empty())
            .filter_map(|index| {
                let example = |wanted: Role| {
                    plan.operations
                        .iter()
                        .filter(|operation| {
                            operation.state.as_ref().is_some_and(|s| s.resource == index && s.role == wanted)
                        })
                        .find_map(|operation| operation.answer.as_ref()?.offered.first())
                        .and_then(|(_, body)| serde_json::from_str::<Value>(body).ok())
                        .filter(Value::is_object)
                };
                Some((index, Vec::new(), example(Role::Read).or_else(|| example(Role::Create))?))
            })
            .collect()),
        super::Seed::Items(by_path) => {
            let Some(by_path) = by_path.as_object() else {
                return Err(OptionsError("a seed is an object of collection paths and their items".into()));
            };
            let mut seeds = Vec::new();
            for (path, items) in by_path {
                let found = plan
                    .resources
                    .iter()
                    .enumerate()
                    .find_map(|(index, resource)| Some((index, scope_of(&resource.collection, path)?)));
                let Some((index, scope)) = found else {
                    return Err(OptionsError(format!("the seed's {path} is no collection the mock keeps")));
                };
                let Some(items) = items.as_array().filter(|items| items.iter().all(Value::is_object)) else {
                    return Err(OptionsError(format!("the seed's {path} is not an array of objects")));
                };
                seeds.extend(items.iter().map(|item| (index, scope.clone(), item.clone())));
            }
            Ok(seeds)
        }
    }
}

/// The values of `route`'s parameters in `path`, if it is one of its paths.
fn scope_of(route: &str, path: &str) -> Option<Vec<String>> {
    let (route, path): (Vec<&str>, Vec<&str>) = (route.split('/').collect(), path.split('/').collect());
    if route.len() != path.len() {
        return None;
    }
    let mut scope = Vec::new();
    for (template, given) in route.iter().zip(&path) {
        match template.starts_with('{') && template.ends_with('}') {
            true => scope.push((*given).to_owned()),
            false if template != given => return None,
            false => {}
        }
    }
    Some(scope)
}

/// Whether resource `index` is nested, at any depth, under resource `ancestor`.
fn descends(resources: &[ResourcePlan], index: usize, ancestor: usize) -> bool {
    let mut parent = resources[index].parent;
    // A plan's parents form no cycle; the bound keeps a hand-written one from looping.
    for _ in 0..resources.len() {
        match parent {
            Some(found) if found == ancestor => return true,
            Some(found) => parent = resources[found].parent,
            None => return false,
        }
    }
    false
}

/// `value`, when it passes `check`.
fn checked(value: Value, check: impl Fn(&Value) -> Result<(), String>) -> Done {
    match check(&value) {
        Ok(()) => Done::Value(value, None),
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
    #[test]
    fn now_is_a_date_time() {
        let now = super::now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20") && now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }
}

//! Each group of operations (`model::groups`) a cargo feature: the client's methods and builders
//! of a group's operations, and the models they reach, compile only with its feature. A model is
//! gated by every group whose client code names it, directly or through other models; one that no
//! operation reaches (a webhook's payload) by [`UNREACHED`]. The features are on by default, so a
//! plain build is the whole API; a team that uses a few groups turns the defaults off.
//!
//! Sound by construction: an item is compiled whenever anything naming it is, because its gate
//! is the union of the gates of everything that names it (a fixpoint over the models' items).
//! The models' builders are gated by their model's reach but are not read by the fixpoint: a
//! builder names the models its model's fields name, and `Self::Error`, which names none. An
//! item's owner is a model it names as models are named (`naming_models`): the conversion
//! error's `impl Display` names `std::fmt::Error`, not a model called `Error`.

use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;

use crate::model::groups::{Groups, UNREACHED};

/// The groups each gated item needs: all of these sets, each one of its features (an item that
/// names two builders needs both).
type Gate = Vec<BTreeSet<String>>;

/// Models reached by more groups than this are gated by a feature of their own set of groups
/// (`Shared`) rather than by a list of them.
const LISTED_GROUPS: usize = 3;

/// The types crate's features for sets of groups: each set's feature (`_models-N`, in the order
/// the models first need them), which every group of the set turns on. Stripe's models, each
/// gated by the list of its groups, were half a million lines of `feature = "…"` (a list of up
/// to 90 groups under most models); a set's feature is one line per model and one per group.
pub(crate) type Shared = Vec<(String, BTreeSet<String>)>;

/// The gating under way: `client`'s items gated first (its `builder` module's members are
/// gated one at a time after it, as that module is read: `client::by_member`), then the
/// models by what all of them name.
pub(super) struct Gating {
    builders: BTreeMap<String, BTreeSet<String>>,
    seeds: Seeds,
}

impl Gating {
    /// Gates `client`'s items by `groups` (its `builder` module's members, if any, are not among
    /// them: see [`Gating::member`]).
    pub(super) fn new(client: &mut syn::File, groups: &Groups) -> Self {
        let builders = builder_groups(client, groups);
        let mut seeds = Seeds::default();
        for item in &mut client.items {
            gate_client_item(item, &builders, &mut seeds);
        }
        Self { builders, seeds }
    }

    /// Gates a member of the client's `builder` module: a builder and its impl by their groups.
    pub(super) fn member(&mut self, member: &mut syn::Item) {
        gate_builder_member(member, &self.builders, &mut self.seeds);
    }

    /// Gates `types` by what the client's items name; the gates go on to the models' builders,
    /// kept as text (`models::Builders`), as each is printed ([`ModelGates::gate`]).
    pub(super) fn models(self, types: &mut syn::File, groups: &Groups) -> ModelGates {
        let reach = reach(types, self.seeds);
        let mut gates = ModelGates { used: groups.names.clone(), sets: BTreeMap::new(), reach };
        gate_models(&mut types.items, &gates.reach, &mut gates.used, &mut gates.sets, true);
        gates
    }
}

/// The models' gates, from their reach: what gated the models gates an item of theirs that is
/// gated later (a builder, printed a member at a time).
pub(super) struct ModelGates {
    reach: BTreeMap<String, Option<BTreeSet<String>>>,
    used: BTreeSet<String>,
    sets: BTreeMap<BTreeSet<String>, usize>,
}

impl ModelGates {
    /// Gates `item` (of the models' `builder` module) by its model's reach.
    pub(super) fn gate(&mut self, item: &mut syn::Item) {
        gate_models(std::slice::from_mut(item), &self.reach, &mut self.used, &mut self.sets, false);
    }

    /// The features, sorted: every group (each gates its operations' methods at least) and
    /// [`UNREACHED`] when some model is reached by no operation; and the features of sets of
    /// groups (`Shared`).
    pub(super) fn features(self) -> (Vec<String>, Shared) {
        let mut shared: Vec<(usize, BTreeSet<String>)> = self.sets.into_iter().map(|(groups, n)| (n, groups)).collect();
        shared.sort_by_key(|(n, _)| *n);
        (self.used.into_iter().collect(), shared.into_iter().map(|(n, groups)| (set_feature(n), groups)).collect())
    }
}

/// The feature of the `n`th set of groups (from 1, in the order the models first need them).
fn set_feature(n: usize) -> String {
    format!("_models-{n}")
}

/// Each builder struct's groups: those of the `Client` method that returns it.
fn builder_groups(client: &syn::File, groups: &Groups) -> BTreeMap<String, BTreeSet<String>> {
    let mut builders = BTreeMap::new();
    for item in &client.items {
        let syn::Item::Impl(item) = item else { continue };
        if item.trait_.is_some() || !is_client(&item.self_ty) {
            continue;
        }
        for member in &item.items {
            let syn::ImplItem::Fn(function) = member else { continue };
            let Some(own) = groups.of.get(&function.sig.ident.to_string()) else { continue };
            if let syn::ReturnType::Type(_, ty) = &function.sig.output
                && let [builder] = named_builders(ty.as_ref()).as_slice()
            {
                builders.insert(builder.clone(), own.clone());
            }
        }
    }
    // A struct of the client's own that only builders' items name (multipart's `…Parts`, which
    // its builder's `.parts(…)` takes) belongs to their groups; one anything else names (`Client`,
    // `Credentials`), to every build.
    let own_structs: BTreeSet<String> = client.items.iter().filter_map(declared).collect();
    let mut users: BTreeMap<String, Option<BTreeSet<String>>> = BTreeMap::new();
    for item in &client.items {
        if matches!(item, syn::Item::Mod(module) if module.ident == "builder") {
            continue;
        }
        let own = match item {
            syn::Item::Impl(item) => last_ident(&item.self_ty),
            item => declared(item),
        };
        let mut found = Paths::default();
        found.visit_item(item);
        let groups: Vec<&BTreeSet<String>> =
            found.after("builder").iter().filter_map(|builder| builders.get(builder)).collect();
        for name in found.idents.iter().filter(|name| own_structs.contains(*name) && own.as_ref() != Some(*name)) {
            let entry = users.entry(name.clone()).or_insert_with(|| Some(BTreeSet::new()));
            match (entry, groups.as_slice()) {
                (entry, []) => *entry = None,
                (Some(set), groups) => set.extend(groups.iter().flat_map(|g| g.iter().cloned())),
                (None, _) => {}
            }
        }
    }
    for (name, groups) in users {
        if let Some(groups) = groups.filter(|groups| !groups.is_empty()) {
            builders.entry(name).or_insert(groups);
        }
    }
    builders
}

fn is_client(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(ty) if ty.path.is_ident("Client"))
}

/// The builders `node` names (`builder::X`).
fn named_builders(node: &dyn Mentioned) -> Vec<String> {
    let mut found = Paths::default();
    node.visit(&mut found);
    found.after("builder")
}

/// What the client's items say of the models: which groups need each one (`None`: every build).
#[derive(Default)]
struct Seeds(BTreeMap<String, Option<BTreeSet<String>>>);

impl Seeds {
    fn add(&mut self, node: &dyn Mentioned, gate: &Gate) {
        let mut found = Paths::default();
        node.visit(&mut found);
        for model in found.after("types") {
            let needed = self.0.entry(model).or_insert_with(|| Some(BTreeSet::new()));
            match (needed, gate.first()) {
                (Some(groups), Some(first)) => groups.extend(first.iter().cloned()),
                (needed, None) => *needed = None,
                (None, Some(_)) => {}
            }
        }
    }
}

/// Gates one of the client's top-level items: the builders and their impls by their groups,
/// each method of `impl Client` by the builders it names, other items by theirs.
fn gate_client_item(item: &mut syn::Item, builders: &BTreeMap<String, BTreeSet<String>>, seeds: &mut Seeds) {
    let gate_of =
        |names: Vec<String>| -> Gate { names.iter().filter_map(|name| builders.get(name).cloned()).collect() };
    match item {
        syn::Item::Mod(module) if module.ident == "builder" => {
            for inner in module.content.iter_mut().flat_map(|(_, items)| items) {
                gate_builder_member(inner, builders, seeds);
            }
        }
        syn::Item::Impl(block) if block.trait_.is_none() && is_client(&block.self_ty) => {
            for member in &mut block.items {
                let gate = gate_of(named_builders(member));
                seeds.add(member, &gate);
                if let syn::ImplItem::Fn(function) = member {
                    push_gate(Some(&mut function.attrs), &gate);
                }
            }
        }
        item => {
            let own = match &*item {
                syn::Item::Impl(item) => last_ident(&item.self_ty),
                item => declared(item),
            };
            let mut names = named_builders(item);
            names.extend(own);
            let gate = gate_of(names);
            seeds.add(item, &gate);
            push_gate(attributes(item), &gate);
        }
    }
}

/// Gates a member of the `builder` module: a builder struct and its impl by the builder's groups.
fn gate_builder_member(inner: &mut syn::Item, builders: &BTreeMap<String, BTreeSet<String>>, seeds: &mut Seeds) {
    let own = match &*inner {
        syn::Item::Struct(item) => Some(item.ident.to_string()),
        syn::Item::Impl(item) => last_ident(&item.self_ty),
        _ => None,
    };
    let gate: Gate = own.iter().filter_map(|name| builders.get(name).cloned()).collect();
    seeds.add(inner, &gate);
    push_gate(attributes(inner), &gate);
}

/// The groups that need each model, the client's seeds carried to every model a model's items
/// name; a model nothing reaches is needed by [`UNREACHED`] (and so is what it names).
fn reach(types: &syn::File, seeds: Seeds) -> BTreeMap<String, Option<BTreeSet<String>>> {
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in &types.items {
        if let Some(model) = declared(item) {
            names.entry(model).or_default();
        }
    }
    let mut owned: Vec<(String, &syn::Item)> = Vec::new();
    own_items(&types.items, &names, &mut owned, true);
    for (owner, item) in owned {
        let mut found = Models { names: &names, found: BTreeSet::new() };
        found.visit_item(item);
        let mut named = found.found;
        named.remove(&owner);
        names.entry(owner).or_default().extend(named);
    }
    // Carried as bit sets over model indices: the largest documents have thousands of models
    // and dozens of groups, and sets of names cloned at every step took seconds.
    let models: Vec<&String> = names.keys().collect();
    let at: BTreeMap<&String, usize> = models.iter().enumerate().map(|(i, name)| (*name, i)).collect();
    let edges: Vec<Vec<usize>> =
        names.values().map(|named| named.iter().filter_map(|n| at.get(n).copied()).collect()).collect();
    let mut groups: Vec<String> = seeds.0.values().flatten().flatten().cloned().collect();
    groups.push(UNREACHED.to_string());
    groups.sort();
    groups.dedup();
    let words = groups.len().div_ceil(64);
    let bit = |group: &String| groups.binary_search(group).expect("every group is listed");
    // `None`: every build needs the model.
    let mut bits: Vec<Option<Vec<u64>>> = vec![Some(vec![0; words]); models.len()];
    let mut seeded = Vec::new();
    for (model, needed) in &seeds.0 {
        let Some(&index) = at.get(model) else { continue };
        bits[index] = needed.as_ref().map(|needed| {
            let mut set = vec![0u64; words];
            for group in needed {
                set[bit(group) / 64] |= 1 << (bit(group) % 64);
            }
            set
        });
        seeded.push(index);
    }
    let spread = |bits: &mut Vec<Option<Vec<u64>>>, mut next: Vec<usize>| {
        while let Some(model) = next.pop() {
            let from = bits[model].clone();
            for &named in &edges[model] {
                let grown = match (&mut bits[named], &from) {
                    (None, _) => false,
                    (entry, None) => {
                        *entry = None;
                        true
                    }
                    (Some(set), Some(from)) => {
                        let mut grown = false;
                        for (word, add) in set.iter_mut().zip(from) {
                            grown |= *word | add != *word;
                            *word |= add;
                        }
                        grown
                    }
                };
                if grown {
                    next.push(named);
                }
            }
        }
    };
    spread(&mut bits, seeded);
    let unreached: Vec<usize> =
        (0..models.len()).filter(|&i| bits[i].as_ref().is_some_and(|set| set.iter().all(|w| *w == 0))).collect();
    let own = bit(&UNREACHED.to_string());
    for &model in &unreached {
        if let Some(set) = &mut bits[model] {
            set[own / 64] |= 1 << (own % 64);
        }
    }
    spread(&mut bits, unreached);
    models
        .iter()
        .zip(bits)
        .map(|(model, set)| {
            let set = set.map(|set| {
                groups
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| set[i / 64] & (1 << (i % 64)) != 0)
                    .map(|(_, g)| g.clone())
                    .collect()
            });
            ((*model).clone(), set)
        })
        .collect()
}

/// The model a top-level item of the models declares.
fn declared(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Struct(item) => Some(item.ident.to_string()),
        syn::Item::Enum(item) => Some(item.ident.to_string()),
        syn::Item::Type(item) => Some(item.ident.to_string()),
        _ => None,
    }
}

/// The model an item of the models belongs to: the one it declares, the one it implements
/// something for, else the first it names (typify's `impl From<X> for String`, a default's
/// function); `None` for items naming no model (the `error` module).
fn owner<V>(item: &syn::Item, names: &BTreeMap<String, V>) -> Option<String> {
    let model = |name: Option<String>| name.filter(|name| names.contains_key(name));
    let own = match item {
        syn::Item::Impl(item) => model(last_ident(&item.self_ty)),
        item => model(declared(item)),
    };
    own.or_else(|| {
        let mut found = Paths::default();
        found.visit_item(item);
        found.paths.iter().flat_map(|path| naming_models(path)).find(|name| names.contains_key(*name)).cloned()
    })
}

/// Every item of `items` that belongs to a model, with it, modules entered (but not the
/// `schemars`-only registry of components, which names every model).
fn own_items<'a>(
    items: &'a [syn::Item],
    names: &BTreeMap<String, BTreeSet<String>>,
    out: &mut Vec<(String, &'a syn::Item)>,
    top: bool,
) {
    for item in items {
        match item {
            syn::Item::Mod(module) if top && module.ident == "components" => {}
            syn::Item::Mod(module) => own_items(
                module.content.as_ref().map(|(_, items)| items.as_slice()).unwrap_or_default(),
                names,
                out,
                false,
            ),
            item => {
                if let Some(owner) = owner(item, names) {
                    out.push((owner, item));
                }
            }
        }
    }
}

/// Gates every item of the models by its owner's reach, recording the features used.
fn gate_models(
    items: &mut [syn::Item],
    reach: &BTreeMap<String, Option<BTreeSet<String>>>,
    used: &mut BTreeSet<String>,
    sets: &mut BTreeMap<BTreeSet<String>, usize>,
    top: bool,
) {
    for item in items.iter_mut() {
        match item {
            syn::Item::Mod(module) if top && module.ident == "components" => {}
            syn::Item::Mod(module) => {
                if let Some((_, items)) = &mut module.content {
                    gate_models(items, reach, used, sets, false);
                }
            }
            item => {
                let Some(Some(groups)) = owner(item, reach).and_then(|owner| reach.get(&owner)) else { continue };
                used.extend(groups.iter().cloned());
                let gate = match groups.len() > LISTED_GROUPS {
                    true => {
                        let next = sets.len() + 1;
                        BTreeSet::from([set_feature(*sets.entry(groups.clone()).or_insert(next))])
                    }
                    false => groups.clone(),
                };
                push_gate(attributes(item), &vec![gate]);
            }
        }
    }
}

/// Adds `#[cfg(…)]` for `gate` (nothing for an empty gate: every build).
fn push_gate(attributes: Option<&mut Vec<syn::Attribute>>, gate: &Gate) {
    let Some(attributes) = attributes else { return };
    let any = |groups: &BTreeSet<String>| -> proc_macro2::TokenStream {
        match groups.iter().collect::<Vec<_>>().as_slice() {
            [one] => quote::quote!(feature = #one),
            many => quote::quote!(any(#(feature = #many),*)),
        }
    };
    let terms: Vec<proc_macro2::TokenStream> = gate.iter().map(any).collect();
    match terms.as_slice() {
        [] => {}
        [one] => attributes.push(syn::parse_quote!(#[cfg(#one)])),
        many => attributes.push(syn::parse_quote!(#[cfg(all(#(#many),*))])),
    }
}

fn attributes(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        syn::Item::Const(item) => Some(&mut item.attrs),
        syn::Item::Enum(item) => Some(&mut item.attrs),
        syn::Item::Fn(item) => Some(&mut item.attrs),
        syn::Item::Impl(item) => Some(&mut item.attrs),
        syn::Item::Mod(item) => Some(&mut item.attrs),
        syn::Item::Static(item) => Some(&mut item.attrs),
        syn::Item::Struct(item) => Some(&mut item.attrs),
        syn::Item::Trait(item) => Some(&mut item.attrs),
        syn::Item::Type(item) => Some(&mut item.attrs),
        syn::Item::Use(item) => Some(&mut item.attrs),
        _ => None,
    }
}

fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(ty) => ty.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The models a node names.
struct Models<'n> {
    names: &'n BTreeMap<String, BTreeSet<String>>,
    found: BTreeSet<String>,
}

impl<'a> Visit<'a> for Models<'_> {
    fn visit_path_segment(&mut self, segment: &'a syn::PathSegment) {
        let name = segment.ident.to_string();
        if self.names.contains_key(&name) {
            self.found.insert(name);
        }
        syn::visit::visit_path_segment(self, segment);
    }
}

/// The segments of a path that may name a model: those first in it or after one of our modules
/// (`X`, `super::X`, `types::X`); `std::fmt::Error`, `Self::Error` and `T::Error` name none,
/// whatever the models are called. (The fixpoint's edges take every segment: a spurious edge
/// gates a model more widely, never too narrowly.)
fn naming_models(segments: &[String]) -> impl Iterator<Item = &String> {
    segments.iter().enumerate().filter_map(|(at, segment)| {
        let ours = at == 0 || matches!(segments[at - 1].as_str(), "super" | "crate" | "self" | "types");
        ours.then_some(segment)
    })
}

/// Something whose paths can be visited: an item or an impl's member.
trait Mentioned {
    fn visit(&self, paths: &mut Paths);
}

impl Mentioned for syn::Item {
    fn visit(&self, paths: &mut Paths) {
        paths.visit_item(self);
    }
}

impl Mentioned for syn::ImplItem {
    fn visit(&self, paths: &mut Paths) {
        paths.visit_impl_item(self);
    }
}

impl Mentioned for syn::Type {
    fn visit(&self, paths: &mut Paths) {
        paths.visit_type(self);
    }
}

/// Every path's segments, and every identifier a path holds.
#[derive(Default)]
struct Paths {
    paths: Vec<Vec<String>>,
    idents: Vec<String>,
}

impl Paths {
    /// The segment after each `module` segment (after `types::builder`, the one after that).
    fn after(&self, module: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for path in &self.paths {
            for (at, segment) in path.iter().enumerate() {
                if segment != module {
                    continue;
                }
                let next = match path.get(at + 1).map(String::as_str) {
                    Some("builder") if module == "types" => path.get(at + 2),
                    _ => path.get(at + 1),
                };
                if let Some(next) = next
                    && !found.contains(next)
                {
                    found.push(next.clone());
                }
            }
        }
        found
    }
}

impl<'a> Visit<'a> for Paths {
    fn visit_path(&mut self, path: &'a syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.idents.extend(segments.iter().cloned());
        self.paths.push(segments);
        syn::visit::visit_path(self, path);
    }
}

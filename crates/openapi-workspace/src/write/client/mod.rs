//! Models and client, both from progenitor: its type space (typify 0.8) becomes the types
//! crate, and its client refers to that crate instead of carrying a second copy.

mod by_member;
mod chunks;
pub(crate) mod cli;
mod cli_chunks;
pub(crate) mod credentials;
mod dates;
mod dead_arms;
mod discriminated;
pub(crate) mod events;
pub(crate) mod features;
pub(crate) mod items;
pub(crate) mod media;
pub(crate) mod methods;
mod models;
pub(crate) mod multipart;
mod pagination;
mod retries;
mod same_shapes;
pub(crate) mod status_errors;
pub(crate) mod styles;
mod untypable;
pub(crate) mod view;

use std::cell::Cell;
use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, InterfaceStyle, TagStyle};

use crate::error::{Error, Result};
use crate::read::{Note, Spec};
use crate::write::Config;
use view::View;

pub(crate) struct Models {
    /// Printed already (with the header), after the client: parsed once, edited in place by the
    /// passes below, its builders printed a member at a time into its `mod builder` (`models::Builders`).
    pub types: String,
    /// Printed already (without the header): its builder module is printed a member at a time.
    pub client: String,
    /// What the samples need of the client, read from its syntax as it was printed.
    pub builders: crate::write::samples::Builders,
    /// The cargo features the client and types crates gate operations and models by (empty
    /// unless the configuration asks for them: `features`).
    pub features: Vec<String>,
    /// The types crate's features of sets of groups (`features::Shared`).
    pub shared_features: features::Shared,
    /// Rust names of every generated model, for the server generator to check its references.
    pub type_names: BTreeSet<String>,
    /// Crates the client's code uses beyond progenitor's runtime (`futures` for paginated
    /// streams, `base64` and `rand` for websocket handshakes).
    pub uses: Vec<&'static str>,
    /// The schemas typed as `serde_json::Value` because typify cannot type them (`untypable`).
    pub notes: Vec<Note>,
    /// The model of the operations, built once here (the client's event streams and multipart
    /// bodies are written from it) and read again by the server's writer.
    pub ops: Vec<crate::model::operation::Op>,
    /// The operations with page and item streams (`pagination`), and the parameter each is paged by.
    pub paginated: Vec<(String, String)>,
}

/// progenitor's settings. The client holds a `Config` (`retries`: its credentials and retry
/// policy); its hooks (written in [`generate`]) send what each operation asks for, write the
/// parameters progenitor cannot (`styles`) and send each request through the retry loop.
pub(crate) fn settings(view: &View) -> GenerationSettings {
    let mut settings = GenerationSettings::default();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged)
        .with_derive("PartialEq")
        .with_derive("schemars::JsonSchema")
        .with_inner_type(quote::quote!(Config))
        .with_hooks(progenitor::HooksMode::Expected);
    for (schema, model) in &view.replacements {
        settings.with_replacement(schema, model, std::iter::empty());
    }
    settings
}

/// Runs progenitor. The document was adapted to what it takes (`view`); should
/// it still find something to panic on, that is an error naming progenitor, not a crash — and
/// nothing on stderr, since the error carries the panic's message.
pub(crate) fn progenitor<T>(what: &str, run: impl FnOnce() -> std::result::Result<T, progenitor::Error>) -> Result<T> {
    quietly(run)
        .map_err(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Error::Document(format!("progenitor cannot generate {what} for this document: {message}"))
        })?
        .map_err(|e| Error::library(format!("progenitor ({what})"), e))
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// `run`, its panic caught and not printed by the panic hook (on this thread only; the hook
/// stays as it was everywhere else).
fn quietly<T>(run: impl FnOnce() -> T) -> std::thread::Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                previous(info)
            }
        }));
    });
    let was = QUIET.replace(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
    QUIET.set(was);
    result
}

/// progenitor's client of `view` (its models inside, in `pub mod types`), and the generator
/// that made it.
fn run(view: &View) -> Result<(Generator, TokenStream)> {
    let mut generator = Generator::new(&settings(view));
    let client = progenitor("a client", || {
        crate::timings::timed("write/client progenitor", || generator.generate_tokens(&view.openapi))
    })?;
    Ok((generator, client))
}

/// progenitor's client of `view`, cut (`chunks::Output`): run whole, or a chunk of operations at
/// a time on the largest documents (`chunks`).
fn produce(
    view: &mut View,
    types_path: &str,
    builder: &by_member::Container<syn::ItemMod>,
    chunk: usize,
) -> Result<chunks::Output> {
    if view.openapi.operations().count() > chunk {
        return chunks::run(view, types_path, builder, chunk);
    }
    let Cut { client, members, types, type_names, futures, websockets } = cut(view, types_path, builder)?;
    let mut bodies = BTreeSet::new();
    let members = crate::write::item_texts(members, |piece| bodies.extend(models::body_builders(piece)));
    Ok(chunks::Output { client, members, types, bodies, type_names, futures, websockets })
}

/// A run of progenitor on `view`, cut: the client (its `types` module a re-export, its builder
/// module left empty), that module's members, the models, and what the generator says of them.
struct Cut {
    client: TokenStream,
    members: Vec<proc_macro2::TokenTree>,
    types: TokenStream,
    type_names: BTreeSet<String>,
    futures: bool,
    websockets: bool,
}

fn cut(view: &View, types_path: &str, builder: &by_member::Container<syn::ItemMod>) -> Result<Cut> {
    let (generator, client) = run(view)?;
    let type_names = generator.get_type_space().iter_types().map(|t| t.name()).collect();
    let (futures, websockets) = (generator.uses_futures(), generator.uses_websockets());
    // What is kept of the run is its output, cut: the client's peak is still ahead.
    drop(generator);
    let (client, types) = take_types_module(client, types_path)?;
    let (client, members) = builder.take_body(client);
    Ok(Cut { client, members, types, type_names, futures, websockets })
}

/// The parts of the client's request hook, each `None` where the document needs none.
struct Hooks {
    credentials: Option<credentials::Client>,
    styles: Option<TokenStream>,
    twins: Option<TokenStream>,
    methods: Option<TokenStream>,
    media: Option<TokenStream>,
}

impl Hooks {
    fn of(spec: &Spec, view: &View) -> Result<Self> {
        Ok(Self {
            credentials: credentials::client(view)?,
            styles: styles::client(spec)?,
            twins: events::hook(spec),
            methods: methods::hook(spec),
            media: media::hook(spec),
        })
    }

    /// Whether the client holds `Credentials`.
    fn credentials(&self) -> bool {
        self.credentials.is_some()
    }
}

pub(crate) fn generate(spec: &Spec, config: &Config) -> Result<Models> {
    in_chunks(spec, config, chunks::OPERATIONS)
}

/// [`generate`], progenitor run `chunk` operations at a time on a document with more.
fn in_chunks(spec: &Spec, config: &Config, chunk: usize) -> Result<Models> {
    let mut view = crate::timings::timed("write/client view", || View::of(spec))?;
    let parts = crate::timings::timed("write/client hooks", || Hooks::of(spec, &view))?;
    let inner = parts.credentials();
    let Hooks { credentials, styles, twins, methods, media } = parts;
    // The client's builder module is read a member at a time (`by_member`): its members are
    // taken out as text as soon as progenitor is done, before the models are parsed — as tokens
    // they took many times the memory, held beside the models' syntax, the generator's peak on the
    // largest documents.
    let builder = by_member::Container::<syn::ItemMod>::new(syn::parse_quote!(
        pub mod builder {}
    ));
    let output = match produce(&mut view, &config.types_path, &builder, chunk) {
        Ok(output) => output,
        // What typify cannot type becomes `serde_json::Value`; what is left is located: in the
        // components when retyping could not make them pass, else in an operation.
        Err(error) => match retyped(&mut view)? {
            None => {
                let error = format!("{} (with no operation at all, still)", error.chain());
                return Err(Error::at("#/components", error));
            }
            Some(notes) if notes.is_empty() => return Err(locate(&view, error)),
            Some(notes) => {
                view.notes.extend(notes);
                produce(&mut view, &config.types_path, &builder, chunk).map_err(|error| locate(&view, error))?
            }
        },
    };
    let chunks::Output { mut client, members, mut types, mut bodies, type_names, futures, websockets } = output;
    let groups = crate::timings::timed("write/client groups", || crate::model::groups::of(&view.openapi));
    let notes = view.notes;
    let errors = view.errors;
    drop(view.openapi);
    crate::write::memory::release();
    let mut uses = Vec::new();
    let mut pre = Vec::new();
    if let Some(styles) = styles {
        client.extend(styles);
        uses.push(RUNTIME_CRATE);
        pre.push(quote::quote! {
            styles::restyle(request, carriers(info.operation_id)).map_err(Error::InvalidRequest)?;
        });
    }
    if let Some(twins) = twins {
        client.extend(twins);
        pre.push(quote::quote! { ask_for_events(info.operation_id, request); });
    }
    if let Some(methods) = methods {
        client.extend(methods);
        pre.push(quote::quote! { send_with_its_method(info.operation_id, request); });
    }
    if let Some(media) = media {
        client.extend(media);
        pre.push(quote::quote! { send_as_its_media_type(info.operation_id, request); });
    }
    if let Some(credentials) = credentials {
        client.extend(credentials.tokens);
        if credentials.basic {
            uses.push("base64");
        }
        pre.push(quote::quote! {
            // progenitor's `Error::InvalidRequest` holds text: the boundary where the error is one.
            self.inner.credentials.apply(info.operation_id, request).await.map_err(|e| Error::InvalidRequest(e.to_string()))?;
        });
    }
    client.extend(retries::client(spec, inner)?);
    uses.push(RUNTIME_CRATE);
    let (fill, exec) = retries::hooks(inner);
    pre.push(fill);
    client.extend(quote::quote! {
        impl ClientHooks<Config> for Client {
            async fn pre<E>(
                &self,
                request: &mut reqwest::Request,
                info: &OperationInfo,
            ) -> std::result::Result<(), Error<E>> {
                #(#pre)*
                Ok(())
            }
            #exec
        }
    });
    // The model of the operations, which the client's event streams and multipart bodies are
    // written from (and the server after them).
    let schemes = crate::model::security::schemes(&spec.openapi)?;
    let ops = crate::timings::timed("write/client operations", || {
        crate::model::operations(spec, &type_names, &schemes, &crate::model::error_object::find(&spec.raw).0)
    })?;
    let extras = [events::client(spec, &ops), items::client(&ops), multipart::client(&ops)];
    for extra in extras.into_iter().flatten() {
        client.extend(extra);
        uses.extend([RUNTIME_CRATE, "futures"]);
    }
    if futures {
        uses.push("futures");
    }
    if websockets {
        uses.extend(["base64", "rand"]);
    }
    // Each component schema's model, by the name typify gives it.
    let components: Vec<(&str, String)> = spec
        .component_schemas()
        .map(|(name, _)| (name.as_str(), heck::ToUpperCamelCase::to_upper_camel_case(name.as_str())))
        .collect();
    types.extend(component_registry(&components, &type_names)?);
    if !errors.is_empty() {
        for model in errors.iter().flat_map(status_errors::ErrorEnum::models) {
            if !type_names.contains(model) {
                return Err(Error::Document(format!(
                    "the errors typed per status name a model typify did not write: {model}"
                )));
            }
        }
        types.extend(status_errors::definitions(&errors));
        client.extend(status_errors::client());
    }
    bodies.extend(models::body_builders(&client));
    let (types, builders) = models::take_builders(types);
    let mut types: syn::File = crate::timings::timed("write/client parse types", || crate::write::parse_file(types))
        .map_err(|e| Error::unparsable("the models", e))?;
    let (empty_variants, kept) = crate::timings::timed("write/client edit types", || {
        let (renamed, kept) = models::edit(&mut types, &bodies, builders);
        dates::written_directly(&mut types)?;
        discriminated::tags_first(&mut types, spec);
        let own = components.iter().map(|(_, model)| model.clone()).collect();
        same_shapes::written_once(&mut types, &own, &kept.built());
        Ok::<_, Error>((renamed, kept))
    })?;
    // The models' token streams are gone, parsed: what they held goes back before the client's.
    crate::write::memory::release();
    // The client but its builder module, parsed whole; that module a member at a time
    // (`by_member`), each edited, gated and read as the rest is, and printed.
    let mut client: syn::File = crate::timings::timed("write/client parse client", || crate::write::parse_file(client))
        .map_err(|e| Error::unparsable("the client", e))?;
    let mut gating = (config.features && groups.names.len() > 1).then(|| features::Gating::new(&mut client, &groups));
    let mut builders = crate::write::samples::Builders { empty_variants, ..Default::default() };
    for item in &mut client.items {
        media::nested_forms(item);
        dead_arms::unreachable_arms(item);
        builders.read_item(item);
    }
    let mut printed = String::new();
    let mut sent = std::collections::BTreeMap::new();
    crate::timings::timed("write/client builders", || {
        crate::write::each_text_item(members, |mut member| {
            media::nested_forms(&mut member);
            dead_arms::unreachable_arms(&mut member);
            if let Some((builder, matched)) = status_errors::decode_by_status(&mut member, &errors) {
                builders.errors.insert(builder, matched);
            }
            if let Some(gating) = &mut gating {
                gating.member(&mut member);
            }
            builders.read_member(&member);
            pagination::read_member(&member, &mut sent);
            printed.push_str(&builder.printed(member));
        })
    })
    .map_err(|e| Error::unparsable("the client's builders", e))?;
    let pagings = crate::model::pagination::of_document(&spec.raw)?;
    let mut paginated = Vec::new();
    if let Some((methods, streamed)) = pagination::client(&pagings, &sent, &builders.fields, &types) {
        let methods: syn::File = syn::parse2(methods).map_err(|e| Error::unparsable("the page streams", e))?;
        client.items.extend(methods.items);
        uses.extend([RUNTIME_CRATE, "futures"]);
        paginated = streamed;
    }
    uses.sort_unstable();
    uses.dedup();
    let mut gates =
        gating.map(|gating| crate::timings::timed("write/client features", || gating.models(&mut types, &groups)));
    let type_builders = crate::timings::timed("write/client print type builders", || {
        kept.printed(&builder, |item| {
            models::renamed_paths(item, &builders.empty_variants);
            if let Some(gates) = &mut gates {
                gates.gate(item);
            }
        })
    })?;
    let (features, shared_features) = gates.map(features::ModelGates::features).unwrap_or_default();
    let client = crate::timings::timed("write/client print client", || crate::write::print(client));
    let client = builder
        .put_back(client, &printed)
        .ok_or_else(|| Error::Document("the printed client lost its builder module".into()))?;
    // The models after the client: their syntax trees are the largest thing held on the largest
    // documents, and what comes after needs only the text.
    let types = crate::timings::timed("write/print types", || {
        builder.put_back(crate::write::format_syntax(config, types), &type_builders)
    })
    .ok_or_else(|| Error::Document("the printed models lost their builder module".into()))?;
    Ok(Models { types, client, builders, features, shared_features, type_names, uses, notes, ops, paginated })
}

/// Retypes the components of `view` typify cannot type (`untypable::retype`): `None` when the
/// components still fail, no notes when they passed as they were (what fails is an operation).
pub(super) fn retyped(view: &mut View) -> Result<Option<Vec<Note>>> {
    let mut document = serde_json::to_value(&view.openapi).map_err(|e| Error::library("the client's view", e))?;
    let passes = |document: &serde_json::Value| -> untypable::Passes {
        let openapi: openapiv3::OpenAPI = serde_json::from_value(document.clone()).map_err(|e| e.to_string())?;
        let mut generator = Generator::new(&settings(view));
        let models = progenitor("the models", || {
            generator.generate_tokens(&openapi)?;
            Ok(generator.get_type_space().to_stream())
        });
        models.map(drop).map_err(|error| {
            let chain = error.chain();
            chain.split_once("for this document: ").map_or(chain.clone(), |(_, why)| why.to_owned())
        })
    };
    let Some(notes) = untypable::retype(&mut document, &passes) else { return Ok(None) };
    view.openapi = serde_json::from_value(document).map_err(|e| Error::library("the client's view", e))?;
    Ok(Some(notes))
}

/// Says which operations progenitor failed on, which it does not — the components pass without
/// operations (`retyped` has seen them do): every operation that fails alone (with every
/// component), each with its own error, so that the tool leaves them all out in one pass; or
/// else that several fail only together. Operations are halved rather than tried one by one:
/// each run costs what the components do, and the largest documents have a thousand operations.
/// The halving is done first with every component standing in as any value (runs that cost next
/// to nothing), each finding then confirmed with the components as they are; only when that
/// finds nothing is it done again with them.
fn locate(view: &View, error: Error) -> Error {
    let failure = |openapi: &openapiv3::OpenAPI, keep: &[(&str, &str)]| -> Option<Error> {
        let mut openapi = openapi.clone();
        for (path, item) in openapi.paths.paths.iter_mut() {
            let openapiv3::ReferenceOr::Item(item) = item else { continue };
            for method in crate::read::document::METHODS {
                if !keep.contains(&(path.as_str(), method)) {
                    match method {
                        "get" => item.get = None,
                        "put" => item.put = None,
                        "post" => item.post = None,
                        "delete" => item.delete = None,
                        "options" => item.options = None,
                        "head" => item.head = None,
                        "patch" => item.patch = None,
                        _ => item.trace = None,
                    }
                }
            }
        }
        let view = View { openapi, replacements: view.replacements.clone(), notes: Vec::new(), errors: Vec::new() };
        run(&view).err()
    };
    let operations: Vec<(&str, &str)> = view.openapi.operations().map(|(path, method, _)| (path, method)).collect();
    let mut stood_in = view.openapi.clone();
    for schema in stood_in.components.iter_mut().flat_map(|components| components.schemas.values_mut()) {
        *schema = openapiv3::ReferenceOr::Item(openapiv3::Schema {
            schema_data: Default::default(),
            schema_kind: openapiv3::SchemaKind::Any(Default::default()),
        });
    }
    let confirmed = |found: Vec<(&str, &str)>| -> Vec<(String, String, Error)> {
        found
            .into_iter()
            .filter_map(|(path, method)| {
                failure(&view.openapi, &[(path, method)]).map(|why| (path.to_owned(), method.to_owned(), why))
            })
            .collect()
    };
    let mut found = confirmed(each_failing(&|keep| failure(&stood_in, keep).is_some(), &operations));
    if found.is_empty() {
        found = confirmed(each_failing(&|keep| failure(&view.openapi, keep).is_some(), &operations));
    }
    if found.is_empty() {
        return Error::at("#/paths", format!("{} (no operation alone, only together)", error.chain()));
    }
    Error::Operations(
        found
            .into_iter()
            .map(|(path, method, why)| {
                let pointer = crate::read::document::pointer(&["paths", &path, &method]);
                crate::error::Failing { path, method, error: Box::new(Error::at(pointer, why.chain())) }
            })
            .collect(),
    )
}

/// The operations of `operations` that fail by themselves (`fails` of a set), found by halving:
/// a half that does not fail holds none. Those that fail only with others are not among them.
fn each_failing<'a>(
    fails: &impl Fn(&[(&'a str, &'a str)]) -> bool,
    operations: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    if operations.is_empty() || !fails(operations) {
        return Vec::new();
    }
    if operations.len() == 1 {
        return operations.to_vec();
    }
    let (first, second) = operations.split_at(operations.len() / 2);
    let mut found = each_failing(fails, first);
    found.extend(each_failing(fails, second));
    found
}

/// The runtime crate, whose `client` modules a client re-exports (its retries always; carriers,
/// event streams, streamed items and multipart bodies where the document has them).
pub(crate) const RUNTIME_CRATE: &str = "openapi-workspace-runtime";

/// A table of every component schema's model, so tests can hold the types against the document
/// (schemars schema, example round trips, bounds) without a hand-kept list that could drift.
fn component_registry(components: &[(&str, String)], type_names: &BTreeSet<String>) -> Result<TokenStream> {
    let entries = components
        .iter()
        .map(|(name, rust_name)| {
            if !type_names.contains(rust_name) {
                return Err(Error::at(
                    format!("#/components/schemas/{name}"),
                    format!("produced no model named {rust_name}"),
                ));
            }
            let ty = quote::format_ident!("{}", rust_name);
            Ok(quote::quote! {
                Component {
                    name: #name,
                    schema: || ::schemars::schema_for!(#ty),
                    round_trip: |value| {
                        let model: #ty = ::serde_json::from_value(value)?;
                        ::serde_json::to_value(model)
                    },
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(quote::quote! {
        /// Every component schema of the document and its model (with the `schemars` feature).
        #[cfg(feature = "schemars")]
        pub mod components {
            use super::*;

            /// A component schema's model, seen from outside.
            pub struct Component {
                /// The schema's name under `components/schemas`.
                pub name: &'static str,
                /// The model's JSON Schema, as schemars derives it.
                pub schema: fn() -> ::schemars::schema::RootSchema,
                /// Deserialises a value into the model and serialises it back.
                pub round_trip: fn(::serde_json::Value) -> ::serde_json::Result<::serde_json::Value>,
            }

            /// All of them, sorted by name.
            pub const ALL: &[Component] = &[#(#entries)*];
        }
    })
}

/// progenitor puts the models in `pub mod types { .. }` inside the client; take that module's
/// tokens out as the models and put a re-export of the types crate in its place, so client and
/// server share one set of models. Done on the tokens, not a parse of the client: the module is
/// most of it.
fn take_types_module(client: TokenStream, types_path: &str) -> Result<(TokenStream, TokenStream)> {
    use proc_macro2::{Delimiter, TokenTree};
    let path: syn::Path =
        syn::parse_str(types_path).map_err(|e| Error::unparsable(format!("types path {types_path:?}"), e))?;
    let mut tokens: Vec<TokenTree> = client.into_iter().collect();
    let body = by_member::group_after(&tokens, &["pub", "mod", "types"], Delimiter::Brace, false)
        .ok_or_else(|| Error::Document("progenitor's client has no `types` module".into()))?;
    let TokenTree::Group(models) = &tokens[body] else { unreachable!("group_after finds a group") };
    let (module, types) = (body - 3, models.stream());
    // The module's attributes (`#` and a bracketed group each) go with it.
    let mut start = module;
    while start >= 2
        && matches!(&tokens[start - 2], TokenTree::Punct(p) if p.as_char() == '#')
        && matches!(&tokens[start - 1], TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket)
    {
        start -= 2;
    }
    let replacement = quote::quote! {
        /// The models, from the shared types crate.
        pub use #path as types;
    };
    tokens.splice(start..module + 4, replacement);
    Ok((tokens.into_iter().collect(), types))
}

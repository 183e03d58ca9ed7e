//! Models and client, both from progenitor: its type space (typify 0.8) becomes the types
//! crate, and its client refers to that crate instead of carrying a second copy.

pub(crate) mod cli;
pub(crate) mod credentials;
pub(crate) mod events;
pub(crate) mod items;
pub(crate) mod media;
pub(crate) mod methods;
pub(crate) mod multipart;
pub(crate) mod styles;
pub(crate) mod view;

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator, InterfaceStyle, TagStyle};

use crate::error::{Error, Result};
use crate::read::Spec;
use crate::write::Config;
use view::View;

pub(crate) struct Models {
    pub types: TokenStream,
    pub client: TokenStream,
    /// Rust names of every generated model, for the server generator to check its references.
    pub type_names: BTreeSet<String>,
    /// Crates the client's code uses beyond progenitor's runtime (`futures` for paginated
    /// streams, `base64` and `rand` for websocket handshakes).
    pub uses: Vec<&'static str>,
}

/// progenitor's settings. With `credentials`, the client holds a [`credentials`]'s
/// `Credentials`; with `hooks`, its request hook (written in [`generate`]) sends what each
/// operation asks for and writes the parameters progenitor cannot (`styles`).
pub(crate) fn settings(view: &View, credentials: bool, hooks: bool) -> GenerationSettings {
    let mut settings = GenerationSettings::default();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged)
        .with_derive("PartialEq")
        .with_derive("schemars::JsonSchema");
    if credentials {
        settings.with_inner_type(quote::quote!(Credentials));
    }
    if hooks {
        settings.with_hooks(progenitor::HooksMode::Expected);
    }
    for (schema, model) in &view.replacements {
        settings.with_replacement(schema, model, std::iter::empty());
    }
    settings
}

/// Runs progenitor. The document was adapted to what it takes (`view`); should
/// it still find something to panic on, that is an error naming progenitor, not a crash.
pub(crate) fn progenitor<T>(what: &str, run: impl FnOnce() -> std::result::Result<T, progenitor::Error>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
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

/// The parts of the client's request hook, each `None` where the document needs none: what the
/// client and the CLI both decide progenitor's settings by, so the two agree.
pub(crate) struct Hooks {
    credentials: Option<credentials::Client>,
    styles: Option<TokenStream>,
    twins: Option<TokenStream>,
    methods: Option<TokenStream>,
    media: Option<TokenStream>,
}

impl Hooks {
    pub(crate) fn of(spec: &Spec, view: &View) -> Result<Self> {
        Ok(Self {
            credentials: credentials::client(view)?,
            styles: styles::client(spec)?,
            twins: events::hook(spec),
            methods: methods::hook(spec),
            media: media::hook(spec),
        })
    }

    /// Whether the client holds `Credentials`.
    pub(crate) fn credentials(&self) -> bool {
        self.credentials.is_some()
    }

    /// Whether the client has a request hook at all.
    pub(crate) fn any(&self) -> bool {
        self.credentials()
            || self.styles.is_some()
            || self.twins.is_some()
            || self.methods.is_some()
            || self.media.is_some()
    }
}

pub(crate) fn generate(spec: &Spec, config: &Config) -> Result<Models> {
    let view = View::of(spec)?;
    let parts = Hooks::of(spec, &view)?;
    let (hooks, inner) = (parts.any(), parts.credentials());
    let Hooks { credentials, styles, twins, methods, media } = parts;
    let mut generator = Generator::new(&settings(&view, inner, hooks));
    let mut client = progenitor("a client", || generator.generate_tokens(&view.openapi))
        .map_err(|error| locate(&view, inner, hooks, error))?;
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
            self.inner.apply(info.operation_id, request).map_err(Error::InvalidRequest)?;
        });
    }
    if hooks {
        let inner = if inner { quote::quote!(Credentials) } else { quote::quote!(()) };
        client.extend(quote::quote! {
            impl ClientHooks<#inner> for Client {
                async fn pre<E>(
                    &self,
                    request: &mut reqwest::Request,
                    info: &OperationInfo,
                ) -> std::result::Result<(), Error<E>> {
                    #(#pre)*
                    Ok(())
                }
            }
        });
    }
    let type_space = generator.get_type_space();
    let type_names: BTreeSet<String> = type_space.iter_types().map(|t| t.name()).collect();
    // The server's model of the operations, which the client's event streams and multipart
    // bodies are written from.
    let ops = crate::model::operations(spec, &type_names, &crate::model::security::schemes(&spec.openapi)?)?;
    let extras = [events::client(spec, &ops), items::client(&ops), multipart::client(&ops)];
    for extra in extras.into_iter().flatten() {
        client.extend(extra);
        uses.extend([RUNTIME_CRATE, "futures"]);
    }
    if generator.uses_futures() {
        uses.push("futures");
    }
    if generator.uses_websockets() {
        uses.extend(["base64", "rand"]);
    }
    uses.sort_unstable();
    uses.dedup();
    let mut types = type_space.to_stream();
    types.extend(component_registry(spec, &type_names)?);
    Ok(Models {
        types: schemars_optional(moved_strings(open_enums(types)?)?)?,
        client: replace_types_module(client, &config.types_path)?,
        type_names,
        uses,
    })
}

/// Says where in the document progenitor failed, which it does not: the first operation that
/// fails alone (with every component), or else the components themselves.
fn locate(view: &View, credentials: bool, hooks: bool, error: Error) -> Error {
    let alone = |keep: Option<(&str, &str)>| {
        let mut document = view.openapi.clone();
        for (path, item) in document.paths.paths.iter_mut() {
            let openapiv3::ReferenceOr::Item(item) = item else { continue };
            for method in crate::read::document::METHODS {
                if keep != Some((path.as_str(), method)) {
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
        let mut generator = Generator::new(&settings(view, credentials, hooks));
        progenitor("a client", || generator.generate_tokens(&document)).is_ok()
    };
    if !alone(None) {
        return Error::at("#/components", format!("{} (with no operation at all, still)", error.chain()));
    }
    for (path, method, _) in view.openapi.operations() {
        if !alone(Some((path, method))) {
            return Error::at(crate::read::document::pointer(&["paths", path, method]), error.chain());
        }
    }
    Error::at("#/paths", format!("{} (no operation alone, only together)", error.chain()))
}

/// The models derive `schemars::JsonSchema` only with the types crate's `schemars` feature:
/// schemars and its derive (a second `syn`) are a sixth of a cold build of the client, and only
/// the drift tests read the schemas.
fn schemars_optional(types: TokenStream) -> Result<TokenStream> {
    use syn::visit_mut::VisitMut;
    struct Gate;
    impl VisitMut for Gate {
        fn visit_attributes_mut(&mut self, attributes: &mut Vec<syn::Attribute>) {
            let mut gated = false;
            for attribute in attributes.iter_mut().filter(|a| a.path().is_ident("derive")) {
                let Ok(paths) = attribute
                    .parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                else {
                    continue;
                };
                let kept: Vec<&syn::Path> =
                    paths.iter().filter(|p| p.segments.last().is_none_or(|s| s.ident != "JsonSchema")).collect();
                if kept.len() < paths.len() {
                    gated = true;
                    *attribute = syn::parse_quote!(#[derive(#(#kept),*)]);
                }
            }
            if gated {
                attributes.push(syn::parse_quote!(#[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema))]));
            }
        }
    }
    let mut file: syn::File = syn::parse2(types).map_err(|e| Error::unparsable("the models", e))?;
    Gate.visit_file_mut(&mut file);
    // typify writes some schemas out by hand (an enum of numbers): those impls too. It names
    // their generator `gen`, a keyword from edition 2024 on: written `r#gen`, any edition reads it.
    struct RawGen;
    impl VisitMut for RawGen {
        fn visit_ident_mut(&mut self, ident: &mut proc_macro2::Ident) {
            if ident == "gen" {
                *ident = proc_macro2::Ident::new_raw("gen", ident.span());
            }
        }
    }
    for item in &mut file.items {
        if let syn::Item::Impl(item) = item
            && item
                .trait_
                .as_ref()
                .is_some_and(|(path, _)| path.segments.last().is_some_and(|s| s.ident == "JsonSchema"))
        {
            item.attrs.push(syn::parse_quote!(#[cfg(feature = "schemars")]));
            RawGen.visit_item_impl_mut(item);
        }
    }
    Ok(quote::quote!(#file))
}

/// A string model with checks (bounds, a pattern) takes the `String` it is read from instead of
/// copying it: typify reads one through `FromStr`, which copies the text it has checked, so each
/// such field of a request cost the server an allocation a hand-written handler does not make
/// (*Why, measured: The generated handlers*). Its checks move into `TryFrom<String>`, which keeps
/// the text it is given; `FromStr` (and `TryFrom<&str>`, through it) copies only to hand it over,
/// and `Deserialize` hands over what it read. Errors and their words are typify's own.
fn moved_strings(types: TokenStream) -> Result<TokenStream> {
    let mut file: syn::File = syn::parse2(types).map_err(|e| Error::unparsable("the models", e))?;
    let implemented = |item: &syn::ItemImpl, name: &str| {
        item.trait_.as_ref().and_then(|(path, _)| path.segments.last()).is_some_and(|s| s.ident == name)
    };
    let self_name = |item: &syn::ItemImpl| match item.self_ty.as_ref() {
        syn::Type::Path(ty) => ty.path.get_ident().map(ToString::to_string),
        _ => None,
    };
    let only_fn = |item: &syn::ItemImpl| {
        item.items.iter().find_map(|member| match member {
            syn::ImplItem::Fn(function) => Some(function.block.clone()),
            _ => None,
        })
    };
    use quote::ToTokens;
    let said = |tokens: &dyn ToTokens| tokens.to_token_stream().to_string();
    // The models whose `FromStr` checks, then copies: their checks.
    let mut checks: BTreeMap<String, Vec<syn::Stmt>> = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Impl(item) = item else { continue };
        let (Some(name), Some(block)) = (self_name(item), only_fn(item)) else { continue };
        if implemented(item, "FromStr")
            && let Some((syn::Stmt::Expr(last, None), statements)) = block.stmts.split_last()
            && said(last) == "Ok (Self (value . to_string ()))"
        {
            checks.insert(name, statements.to_vec());
        }
    }
    let takes_string = |item: &syn::ItemImpl| {
        item.trait_.as_ref().is_some_and(|(path, _)| said(path).ends_with("TryFrom < :: std :: string :: String >"))
    };
    for item in &mut file.items {
        let syn::Item::Impl(item) = item else { continue };
        let Some(statements) = self_name(item).and_then(|name| checks.get(&name)) else { continue };
        let body: Option<syn::Block> = if implemented(item, "FromStr") {
            Some(syn::parse_quote!({
                <Self as ::std::convert::TryFrom<::std::string::String>>::try_from(value.to_string())
            }))
        } else if takes_string(item) {
            Some(syn::parse_quote!({
                {
                    let value: &str = &value;
                    #(#statements)*
                }
                Ok(Self(value))
            }))
        } else if implemented(item, "Deserialize")
            && only_fn(item)
                .is_some_and(|block| said(&block).contains("String :: deserialize (deserializer) ? . parse ()"))
        {
            Some(syn::parse_quote!({
                <Self as ::std::convert::TryFrom<::std::string::String>>::try_from(
                    <::std::string::String as ::serde::Deserialize>::deserialize(deserializer)?,
                )
                .map_err(|e: self::error::ConversionError| <D::Error as ::serde::de::Error>::custom(e.to_string()))
            }))
        } else {
            None
        };
        if let Some(body) = body {
            for member in &mut item.items {
                if let syn::ImplItem::Fn(function) = member {
                    function.block = body.clone();
                }
            }
        }
    }
    Ok(quote::quote!(#file))
}

/// The name of the variant a value the document does not list reads as.
/// The runtime crate, whose `client` modules a client with carriers, event streams, streamed
/// items or multipart bodies re-exports.
pub(crate) const RUNTIME_CRATE: &str = "openapi-workspace-runtime";

pub(crate) const UNKNOWN_VARIANT: &str = "Unknown";

/// Every enum of string values takes a value the document does not list as its `Unknown`
/// variant instead of failing the whole response: a later minor version of the document may add
/// values to an enum a response carries (new statuses, new event names), and a client built on
/// an earlier one must go on reading. `Unknown` cannot be sent (serialising it is an error), and
/// the server never sees one (it validates requests against the document before reading them).
/// An enum that already has a variant of that name is left as it is.
fn open_enums(types: TokenStream) -> Result<TokenStream> {
    use syn::visit_mut::VisitMut;
    struct Open {
        opened: BTreeSet<String>,
    }
    impl VisitMut for Open {
        fn visit_item_enum_mut(&mut self, item: &mut syn::ItemEnum) {
            let serde_attribute = |attribute: &syn::Attribute| attribute.path().is_ident("serde");
            let renamed = |variant: &syn::Variant| {
                variant.attrs.iter().filter(|a| serde_attribute(a)).any(|a| {
                    let mut rename = false;
                    let _ = a.parse_nested_meta(|meta| {
                        rename |= meta.path.is_ident("rename");
                        if meta.input.peek(syn::Token![=]) {
                            let _: syn::Expr = meta.value()?.parse()?;
                        }
                        Ok(())
                    });
                    rename
                })
            };
            // Plain string enums only: unit variants, each renamed to its value, and no
            // `untagged` or `tag` on the enum.
            let plain = !item.variants.is_empty()
                && item.variants.iter().all(|v| matches!(v.fields, syn::Fields::Unit) && renamed(v))
                && !item.attrs.iter().filter(|a| serde_attribute(a)).any(|a| {
                    let text = quote::quote!(#a).to_string();
                    text.contains("untagged") || text.contains("tag")
                })
                && !item.variants.iter().any(|v| v.ident == UNKNOWN_VARIANT);
            if !plain {
                return;
            }
            let name = quote::format_ident!("{}", UNKNOWN_VARIANT);
            item.variants.push(syn::parse_quote! {
                /// A value this version of the document does not list: a later minor version
                /// added it. Read, never sent.
                #[serde(other, skip_serializing)]
                #[cfg_attr(feature = "schemars", schemars(skip))]
                #name
            });
            self.opened.insert(item.ident.to_string());
        }

        fn visit_item_impl_mut(&mut self, item: &mut syn::ItemImpl) {
            // The `Display` of an opened enum matches every variant: `Unknown` too.
            let display = item
                .trait_
                .as_ref()
                .is_some_and(|(path, _)| path.segments.last().is_some_and(|s| s.ident == "Display"));
            let syn::Type::Path(own) = item.self_ty.as_ref() else { return };
            let Some(own) = own.path.segments.last().map(|s| s.ident.to_string()) else { return };
            if !display {
                return;
            }
            struct Arms;
            impl VisitMut for Arms {
                fn visit_expr_match_mut(&mut self, matched: &mut syn::ExprMatch) {
                    let name = quote::format_ident!("{}", UNKNOWN_VARIANT);
                    matched.arms.push(syn::parse_quote!(Self::#name => f.write_str("<unknown>"),));
                }
            }
            if self.opened.contains(&own) {
                Arms.visit_item_impl_mut(item);
            }
        }
    }
    let mut file: syn::File = syn::parse2(types).map_err(|e| Error::unparsable("the models", e))?;
    // Enums first (they are declared before their impls, but a visit in one pass would depend
    // on it): then their `Display`s.
    let mut open = Open { opened: BTreeSet::new() };
    for item in &mut file.items {
        if let syn::Item::Enum(item) = item {
            open.visit_item_enum_mut(item);
        }
    }
    for item in &mut file.items {
        if let syn::Item::Impl(item) = item {
            open.visit_item_impl_mut(item);
        }
    }
    Ok(quote::quote!(#file))
}

/// A table of every component schema's model, so tests can hold the types against the document
/// (schemars schema, example round trips, bounds) without a hand-kept list that could drift.
fn component_registry(spec: &Spec, type_names: &BTreeSet<String>) -> Result<TokenStream> {
    let entries = spec
        .component_schemas()
        .map(|(name, _)| {
            let rust_name = heck::ToUpperCamelCase::to_upper_camel_case(name.as_str());
            if !type_names.contains(&rust_name) {
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

/// progenitor puts the models in `pub mod types { .. }` inside the client; swap that module for
/// a re-export of the types crate so client and server share one set of models.
fn replace_types_module(client: TokenStream, types_path: &str) -> Result<TokenStream> {
    let mut file: syn::File = syn::parse2(client).map_err(|e| Error::unparsable("progenitor's client", e))?;
    let path: syn::Path =
        syn::parse_str(types_path).map_err(|e| Error::unparsable(format!("types path {types_path:?}"), e))?;
    let position = file
        .items
        .iter()
        .position(|item| matches!(item, syn::Item::Mod(m) if m.ident == "types"))
        .ok_or_else(|| Error::Document("progenitor's client has no `types` module".into()))?;
    file.items[position] = syn::parse_quote! {
        /// The models, from the shared types crate.
        pub use #path as types;
    };
    Ok(quote::quote!(#file))
}

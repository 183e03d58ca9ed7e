//! Pagination as streams: for each operation `model::pagination` finds paging, the client gains
//! `{operation}_pages` (every page, each through the operation's own call and its retries) and
//! `{operation}_stream` (every item across them), written on the runtime's `client::pages`. The
//! types are read from what progenitor wrote: the page's type and error from the builder's
//! `send`, the parameter's from the builder's field, the items' and fields' from the models.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::pagination::{Next, Paging};

/// What a builder's `send` answers (the page's type and the error's), and the builder's `cfg`s
/// (its group's feature), as written in the client.
#[derive(Default)]
pub(super) struct Sent {
    answers: Option<(syn::Type, syn::Type)>,
    cfg: Vec<syn::Attribute>,
}

/// Reads a member of the builder module: a builder's `cfg`s, or its `send`'s types.
pub(super) fn read_member(member: &syn::Item, sent: &mut BTreeMap<String, Sent>) {
    match member {
        syn::Item::Struct(builder) => {
            let cfg = builder.attrs.iter().filter(|a| a.path().is_ident("cfg")).cloned().collect();
            sent.entry(builder.ident.to_string()).or_default().cfg = cfg;
        }
        syn::Item::Impl(implementation) => {
            let syn::Type::Path(path) = &*implementation.self_ty else { return };
            let Some(name) = path.path.segments.last().map(|s| s.ident.to_string()) else { return };
            let send = implementation.items.iter().find_map(|item| match item {
                syn::ImplItem::Fn(function) if function.sig.ident == "send" => Some(function),
                _ => None,
            });
            let answers = send.and_then(|send| page_and_error(&send.sig.output));
            sent.entry(name).or_default().answers = answers;
        }
        _ => {}
    }
}

/// `T` and `E` of `-> Result<ResponseValue<T>, Error<E>>`.
fn page_and_error(output: &syn::ReturnType) -> Option<(syn::Type, syn::Type)> {
    let syn::ReturnType::Type(_, ty) = output else { return None };
    let result = arguments(ty)?;
    let (value, error) = (result.first()?, result.get(1)?);
    Some((arguments(value)?.first()?.clone(), arguments(error)?.first()?.clone()))
}

/// The type arguments of a path type's last segment.
fn arguments(ty: &syn::Type) -> Option<Vec<syn::Type>> {
    let syn::Type::Path(path) = ty else { return None };
    let syn::PathArguments::AngleBracketed(arguments) = &path.path.segments.last()?.arguments else { return None };
    Some(
        arguments
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(ty) => Some(ty.clone()),
                _ => None,
            })
            .collect(),
    )
}

/// The streams' methods, and the operations that have them with the parameter each is paged by;
/// `None` when none has.
pub(super) fn client(
    pagings: &[(String, Paging)],
    sent: &BTreeMap<String, Sent>,
    fields: &BTreeMap<String, BTreeMap<String, String>>,
    types: &syn::File,
) -> Option<(TokenStream, Vec<(String, String)>)> {
    let models = Models::of(types);
    let taken: BTreeSet<String> = fields.keys().map(|builder| builder.to_snake_case()).collect();
    let mut streamed = Vec::new();
    let methods: Vec<TokenStream> = pagings
        .iter()
        .filter_map(|(operation, paging)| {
            let builder = crate::model::operation::builder_name(operation);
            let method = crate::model::operation::method_name(operation);
            let names = [format!("{method}_pages"), format!("{method}_stream")];
            if names.iter().any(|name| taken.contains(name)) {
                return None;
            }
            // progenitor tells a query parameter from a path one of its name by its place.
            let field = crate::model::names::builder_field(&paging.param);
            let fields = fields.get(&builder)?;
            let param = [format!("{field}_query"), field].into_iter().find(|f| fields.contains_key(f))?;
            let param_type = &fields[&param];
            let methods = streams(&method, &builder, &param, param_type, paging, sent.get(&builder)?, &models)?;
            streamed.push((operation.clone(), paging.param.clone()));
            Some(methods)
        })
        .collect();
    if methods.is_empty() {
        return None;
    }
    Some((
        quote! {
            /// Every page of a paginated operation, and every item across its pages.
            pub use openapi_workspace_runtime::client::pages;

            impl Client {
                #(#methods)*
            }
        },
        streamed,
    ))
}

/// The two methods of one operation; `None` where a type they need cannot be read.
fn streams(
    method: &str,
    builder: &str,
    param: &str,
    param_type: &str,
    paging: &Paging,
    sent: &Sent,
    models: &Models,
) -> Option<TokenStream> {
    let Sent { answers, cfg } = sent;
    let (page, error) = answers.as_ref()?;
    // A count is advanced as an integer: a parameter of another type is not one.
    let counted = matches!(paging.next, Next::Offset { .. } | Next::Page { .. });
    let integer =
        ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "std::num::NonZero", "::std::num::NonZero"]
            .iter()
            .any(|prefix| param_type.starts_with(prefix));
    if counted && !integer {
        return None;
    }
    let param_type: syn::Type = syn::parse_str(param_type).ok()?;
    // The items: the page itself (an array), or a property of it.
    let (item, items_ref, items_owned) = match &paging.items {
        None => (arguments(page)?.first()?.clone(), quote!(page.as_slice()), quote!(page)),
        Some(property) => {
            let field = models.field(last_ident(page)?, property)?;
            let ident = &field.ident;
            let inner = match field.optional {
                true => arguments(&field.ty)?.first()?.clone(),
                false => field.ty.clone(),
            };
            let item = models.in_client(arguments(&inner)?.first()?);
            match field.optional {
                true => {
                    (item, quote!(page.#ident.as_deref().unwrap_or_default()), quote!(page.#ident.unwrap_or_default()))
                }
                false => (item, quote!(page.#ident.as_slice()), quote!(page.#ident)),
            }
        }
    };
    let next = match &paging.next {
        Next::AfterLast { id, has_more } => {
            let id = models.field(last_ident(&item)?, id)?.ident;
            let ended = match has_more.as_ref().and_then(|name| models.field(last_ident(page)?, name)) {
                Some(Field { ident, optional: true, .. }) => quote!(page.#ident == Some(false)),
                Some(Field { ident, .. }) => quote!(!page.#ident),
                None => quote!(false),
            };
            quote! {
                if #ended {
                    return None;
                }
                items.last().and_then(|item| pages::value(&item.#id))
            }
        }
        Next::Cursor { field } => {
            let (first, rest) = field.split_first()?;
            let outer = models.field(last_ident(page)?, first)?;
            let ident = &outer.ident;
            match rest {
                [] => quote!(pages::value(&page.#ident)),
                [inner] => {
                    let holder = if outer.optional { arguments(&outer.ty)?.first()?.clone() } else { outer.ty.clone() };
                    let inner = models.field(last_ident(&holder)?, inner)?.ident;
                    match outer.optional {
                        true => quote!(page.#ident.as_ref().and_then(|holder| pages::value(&holder.#inner))),
                        false => quote!(pages::value(&page.#ident.#inner)),
                    }
                }
                _ => return None,
            }
        }
        Next::Link => quote!(pages::link_next(page.headers(), #param)),
        Next::Offset { start } => {
            quote!((!items.is_empty()).then(|| pages::advanced(current, #start, items.len())).flatten())
        }
        Next::Page { start } => quote!((!items.is_empty()).then(|| pages::advanced(current, #start, 1)).flatten()),
    };
    // What the next value is read from besides the page: its items, the value just sent.
    let current = if counted { quote!(current) } else { quote!(_) };
    let items = match paging.next {
        Next::Link | Next::Cursor { .. } => quote!(),
        _ => quote!(let items: &[#item] = #items_ref;),
    };
    let first = match &paging.next {
        Next::Offset { start } | Next::Page { start } => quote!(pages::start::<#param_type>(#start)),
        _ => quote!(None),
    };
    let (call, builder, setter) = (format_ident!("{method}"), format_ident!("{builder}"), format_ident!("{param}"));
    let (pages, stream) = (format_ident!("{method}_pages"), format_ident!("{method}_stream"));
    let pages_doc = format!(
        " Every page of [`Client::{method}`], each asked for by its own call (with its retries).\n \
         `request` sets the operation's parameters, as on its builder; `{}` is the stream's to set.",
        paging.param
    );
    let stream_doc = format!(" Every item of every page of [`Client::{method}`] (see [`Client::{method}_pages`]).");
    Some(quote! {
        #[doc = #pages_doc]
        #(#cfg)*
        pub fn #pages<'a>(
            &'a self,
            request: impl Fn(builder::#builder<'a>) -> builder::#builder<'a> + 'a,
        ) -> impl futures::Stream<Item = Result<ResponseValue<#page>, Error<#error>>> + 'a {
            pages::pages(
                #first,
                move |value: Option<#param_type>| {
                    let builder = request(self.#call());
                    match value {
                        Some(value) => builder.#setter(value),
                        None => builder,
                    }
                    .send()
                },
                |page: &ResponseValue<#page>, #current: Option<&#param_type>| -> Option<#param_type> {
                    #items
                    #next
                },
            )
        }

        #[doc = #stream_doc]
        #(#cfg)*
        pub fn #stream<'a>(
            &'a self,
            request: impl Fn(builder::#builder<'a>) -> builder::#builder<'a> + 'a,
        ) -> impl futures::Stream<Item = Result<#item, Error<#error>>> + 'a {
            pages::items(self.#pages(request), |page: #page| #items_owned)
        }
    })
}

/// The last segment's name of a path type (`types::Page` → `Page`).
fn last_ident(ty: &syn::Type) -> Option<String> {
    let syn::Type::Path(path) = ty else { return None };
    Some(path.path.segments.last()?.ident.to_string())
}

/// A model's field.
struct Field {
    ident: syn::Ident,
    ty: syn::Type,
    optional: bool,
}

/// The models' structs, by name (an alias by its target's), and every model's name, as the
/// types module writes them.
struct Models<'a> {
    structs: BTreeMap<String, &'a syn::ItemStruct>,
    aliases: BTreeMap<String, String>,
    names: BTreeSet<String>,
}

impl<'a> Models<'a> {
    fn of(types: &'a syn::File) -> Self {
        let mut models = Self { structs: BTreeMap::new(), aliases: BTreeMap::new(), names: BTreeSet::new() };
        for item in &types.items {
            match item {
                syn::Item::Struct(model) => {
                    models.structs.insert(model.ident.to_string(), model);
                    models.names.insert(model.ident.to_string());
                }
                syn::Item::Enum(model) => {
                    models.names.insert(model.ident.to_string());
                }
                syn::Item::Type(alias) => {
                    if let Some(target) = last_ident(&alias.ty) {
                        models.aliases.insert(alias.ident.to_string(), target);
                    }
                    models.names.insert(alias.ident.to_string());
                }
                _ => {}
            }
        }
        models
    }

    /// The field of the model `name` that holds the JSON property `property`.
    fn field(&self, name: String, property: &str) -> Option<Field> {
        let name = self.aliases.get(&name).cloned().unwrap_or(name);
        let model = self.structs.get(&name)?;
        let field = model.fields.iter().find(|field| {
            let renamed = super::models::serde_rename(&field.attrs);
            match renamed {
                Some(renamed) => renamed == property,
                None => field.ident.as_ref().is_some_and(|i| i.to_string().trim_start_matches("r#") == property),
            }
        })?;
        let optional = last_ident(&field.ty).as_deref() == Some("Option");
        Some(Field { ident: field.ident.clone()?, ty: field.ty.clone(), optional })
    }

    /// A type as the types module writes it, as the client names it: each model `types::`.
    fn in_client(&self, ty: &syn::Type) -> syn::Type {
        struct Qualify<'b>(&'b Models<'b>);
        impl syn::visit_mut::VisitMut for Qualify<'_> {
            fn visit_type_path_mut(&mut self, path: &mut syn::TypePath) {
                syn::visit_mut::visit_type_path_mut(self, path);
                let model = path.qself.is_none()
                    && path.path.leading_colon.is_none()
                    && path.path.segments.len() == 1
                    && path.path.segments.first().is_some_and(|s| self.0.names.contains(&s.ident.to_string()));
                if model {
                    path.path.segments.insert(0, format_ident!("types").into());
                }
            }
        }
        let mut ty = ty.clone();
        syn::visit_mut::VisitMut::visit_type_mut(&mut Qualify(self), &mut ty);
        ty
    }
}

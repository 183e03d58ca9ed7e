//! What is made of typify's models after it writes them, each pass on the parsed file: builders
//! only for what requests carry, enums open to values a later version adds, checked strings moved
//! rather than copied, `schemars` behind a feature.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// Every pass, in order, over the models of a client that names the builders `bodies`;
/// `builders` are typify's, taken out before the models were parsed (`take_builders`). Answers
/// the enums whose `""` variant is `Empty` (typify's `X`), which other users of typify's
/// names (the CLI) rename too, and the builders kept, still as text.
pub(super) fn edit(
    file: &mut syn::File,
    bodies: &BTreeSet<String>,
    builders: Builders,
) -> (BTreeSet<String>, Builders) {
    let kept = builders_sent(file, bodies, builders);
    let renamed = empty_variants(file);
    open_enums(file);
    moved_strings(file);
    schemars_optional(file);
    (renamed, kept)
}

/// The models derive `schemars::JsonSchema` only with the types crate's `schemars` feature:
/// schemars and its derive (a second `syn`) are a sixth of a cold build of the client, and only
/// the drift tests read the schemas.
fn schemars_optional(file: &mut syn::File) {
    use syn::visit_mut::VisitMut;
    struct Gate;
    impl VisitMut for Gate {
        fn visit_attributes_mut(&mut self, attributes: &mut Vec<syn::Attribute>) {
            if without_derive(attributes, "JsonSchema") {
                attributes.push(syn::parse_quote!(#[cfg_attr(feature = "schemars", derive(::schemars::JsonSchema))]));
            }
        }
    }
    Gate.visit_file_mut(file);
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
}

/// Takes the derive of `name` (a trait, by its last path segment) out of `attributes`' `derive`s;
/// answers whether there was one.
pub(super) fn without_derive(attributes: &mut [syn::Attribute], name: &str) -> bool {
    let mut found = false;
    for attribute in attributes.iter_mut().filter(|a| a.path().is_ident("derive")) {
        let Ok(paths) =
            attribute.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        else {
            continue;
        };
        let kept: Vec<&syn::Path> =
            paths.iter().filter(|p| p.segments.last().is_none_or(|s| s.ident != name)).collect();
        if kept.len() < paths.len() {
            found = true;
            *attribute = syn::parse_quote!(#[derive(#(#kept),*)]);
        }
    }
    found
}

/// The models' builders the client names (`types::builder::X`: its request bodies').
pub(super) fn body_builders(client: &TokenStream) -> BTreeSet<String> {
    use proc_macro2::TokenTree;
    fn walk(tokens: TokenStream, found: &mut BTreeSet<String>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let ident = |tree: &TokenTree, name: &str| matches!(tree, TokenTree::Ident(ident) if ident == name);
        let colons = |pair: &[TokenTree]| pair.iter().all(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'));
        for (at, tree) in tokens.iter().enumerate() {
            if let TokenTree::Group(group) = tree {
                walk(group.stream(), found);
            }
            if let [types, first @ .., TokenTree::Ident(name)] = tokens.get(at..at + 7).unwrap_or_default()
                && ident(types, "types")
                && colons(&first[0..2])
                && ident(&first[2], "builder")
                && colons(&first[3..5])
            {
                found.insert(name.to_string());
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(client.clone(), &mut found);
    found
}

/// typify's `mod builder`, taken out of its models before they are parsed: each item's tokens and
/// the model it builds (the last name before its body: `struct X`, `impl … for X`, `impl X`).
/// Most builders are dropped (`builders_sent`): parsing them first was most of the time and
/// memory the models' parse took on the largest documents. Each is kept as text until it is
/// printed ([`Builders::printed`]) a member at a time into the models' empty `mod builder {}`:
/// a token stream takes many times the memory of its text, and the builders, parsed whole beside
/// the models, were the largest syntax held on the largest documents.
pub(super) struct Builders(Vec<(Option<String>, String)>);

/// `types` with its `mod builder { … }` left empty, and that module's items.
pub(super) fn take_builders(types: TokenStream) -> (TokenStream, Builders) {
    let mut tokens: Vec<TokenTree> = types.into_iter().collect();
    let mut items = Vec::new();
    let at = super::by_member::group_after(&tokens, &["mod", "builder"], Delimiter::Brace, false);
    if let Some(at) = at
        && let TokenTree::Group(group) = &mut tokens[at]
    {
        for item in crate::write::pieces(group.stream().into_iter().collect()) {
            let name = item.iter().rev().find_map(|t| match t {
                TokenTree::Ident(ident) => Some(ident.to_string()),
                _ => None,
            });
            items.push((name, item.into_iter().collect::<TokenStream>().to_string()));
        }
        *group = Group::new(Delimiter::Brace, TokenStream::new());
    }
    (tokens.into_iter().collect(), Builders(items))
}

/// Every model has a builder (progenitor asks typify for them), but a caller builds only what
/// it sends: the request bodies and the models inside them (a nested builder is how a nested
/// value is written: `.bank_account(types::BankAccount::builder()…)`). The others' builders —
/// two thirds of the models' lines on the largest public documents, models only ever received —
/// are not written; a server builds its answers with struct literals.
fn builders_sent(file: &mut syn::File, bodies: &BTreeSet<String>, builders: Builders) -> Builders {
    let sent = reached(file, bodies);
    let own = |ty: &syn::Type| match ty {
        syn::Type::Path(ty) => ty.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let kept =
        builders.0.into_iter().filter(|(name, _)| name.as_ref().is_none_or(|name| sent.contains(name))).collect();
    // `impl X { pub fn builder() -> builder::X }`, an impl of its own.
    file.items.retain(|item| match item {
        syn::Item::Impl(item) => {
            !(item.trait_.is_none()
                && !item.items.is_empty()
                && item.items.iter().all(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "builder"))
                && own(&item.self_ty).is_some_and(|name| !sent.contains(&name)))
        }
        _ => true,
    });
    Builders(kept)
}

impl Builders {
    /// The models that have a builder.
    pub(super) fn built(&self) -> BTreeSet<String> {
        self.0.iter().filter_map(|(name, _)| name.clone()).collect()
    }

    /// Each builder parsed, edited by `edit`, printed as a member of `module`, and dropped.
    pub(super) fn printed(
        self,
        module: &super::by_member::Container<syn::ItemMod>,
        mut edit: impl FnMut(&mut syn::Item),
    ) -> crate::error::Result<String> {
        let mut printed = String::new();
        for (_, text) in self.0 {
            let mut item =
                syn::parse_str::<syn::Item>(&text).map_err(|e| crate::error::Error::unparsable("a builder", e))?;
            edit(&mut item);
            printed.push_str(&module.printed(item));
        }
        Ok(printed)
    }
}

/// `from` and every model their fields and variants name, and theirs, to the end.
fn reached(file: &syn::File, from: &BTreeSet<String>) -> BTreeSet<String> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct Named(BTreeSet<String>);
    impl<'a> Visit<'a> for Named {
        fn visit_path_segment(&mut self, segment: &'a syn::PathSegment) {
            self.0.insert(segment.ident.to_string());
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut names: BTreeMap<String, Named> = BTreeMap::new();
    for item in &file.items {
        let mut named = Named::default();
        let name = match item {
            syn::Item::Struct(item) => {
                named.visit_fields(&item.fields);
                &item.ident
            }
            syn::Item::Enum(item) => {
                item.variants.iter().for_each(|variant| named.visit_fields(&variant.fields));
                &item.ident
            }
            _ => continue,
        };
        names.insert(name.to_string(), named);
    }
    let mut reached = from.clone();
    let mut next: Vec<&String> = from.iter().collect();
    while let Some(name) = next.pop() {
        for named in names.get(name).into_iter().flat_map(|named| &named.0) {
            if names.contains_key(named) && reached.insert(named.clone()) {
                next.push(named);
            }
        }
    }
    reached
}

/// A string model with checks (bounds, a pattern) takes the `String` it is read from instead of
/// copying it: typify reads one through `FromStr`, which copies the text it has checked, so each
/// such field of a request cost the server an allocation a hand-written handler does not make
/// (*Why, measured: The generated handlers*). Its checks move into `TryFrom<String>`, which keeps
/// the text it is given; `FromStr` (and `TryFrom<&str>`, through it) copies only to hand it over,
/// and `Deserialize` hands over what it read. Errors and their words are typify's own.
fn moved_strings(file: &mut syn::File) {
    let implemented = |item: &syn::ItemImpl, name: &str| {
        item.trait_.as_ref().and_then(|(path, _)| path.segments.last()).is_some_and(|s| s.ident == name)
    };
    fn only_fn(item: &syn::ItemImpl) -> Option<&syn::Block> {
        item.items.iter().find_map(|member| match member {
            syn::ImplItem::Fn(function) => Some(&function.block),
            _ => None,
        })
    }
    use quote::ToTokens;
    let said = |tokens: &dyn ToTokens| tokens.to_token_stream().to_string();
    // The models whose `FromStr` checks, then copies: their checks.
    let mut checks: BTreeMap<String, Vec<syn::Stmt>> = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Impl(item) = item else { continue };
        if !implemented(item, "FromStr") {
            continue;
        }
        let (Some(name), Some(block)) = (self_name(item), only_fn(item)) else { continue };
        if let Some((syn::Stmt::Expr(last, None), statements)) = block.stmts.split_last()
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
}

/// The variant typify names `X` for the value `""` (Stripe's "unset", in hundreds of enums) is
/// `Empty`, wherever the file names it (its enum's impls, typify's defaults), unless the enum
/// has an `Empty` already.
fn empty_variants(file: &mut syn::File) -> BTreeSet<String> {
    let is_empty_text =
        |variant: &syn::Variant| variant.ident == "X" && serde_rename(&variant.attrs).as_deref() == Some("");
    let mut renamed = BTreeSet::new();
    for item in &mut file.items {
        let syn::Item::Enum(item) = item else { continue };
        if item.variants.iter().any(|v| v.ident == "Empty") {
            continue;
        }
        if let Some(variant) = item.variants.iter_mut().find(|v| is_empty_text(v)) {
            variant.ident = quote::format_ident!("Empty");
            renamed.insert(item.ident.to_string());
        }
    }
    if renamed.is_empty() {
        return renamed;
    }
    for item in &mut file.items {
        renamed_paths(item, &renamed);
    }
    renamed
}

/// Renames `Name::X` in `item` for each enum `Name` of `renamed` (`empty_variants`), and `Self::X`
/// inside its impls.
pub(super) fn renamed_paths(item: &mut syn::Item, renamed: &BTreeSet<String>) {
    use syn::visit_mut::VisitMut;
    if renamed.is_empty() {
        return;
    }
    struct Paths<'a> {
        renamed: &'a BTreeSet<String>,
        own: Option<String>,
    }
    impl VisitMut for Paths<'_> {
        fn visit_item_impl_mut(&mut self, item: &mut syn::ItemImpl) {
            let before = self.own.replace(self_name(item).unwrap_or_default());
            syn::visit_mut::visit_item_impl_mut(self, item);
            self.own = before;
        }

        fn visit_path_mut(&mut self, path: &mut syn::Path) {
            let count = path.segments.len();
            if count >= 2 && path.segments[count - 1].ident == "X" {
                let owner = path.segments[count - 2].ident.to_string();
                let owner = if owner == "Self" { self.own.clone().unwrap_or_default() } else { owner };
                if self.renamed.contains(&owner) {
                    path.segments[count - 1].ident = quote::format_ident!("Empty");
                }
            }
            syn::visit_mut::visit_path_mut(self, path);
        }
    }
    Paths { renamed, own: None }.visit_item_mut(item);
}

/// The value a variant is renamed to, `#[serde(rename = "…")]` (the one form typify writes).
/// `rename = "…"` of the `#[serde(…)]` among `attributes` (a variant's, a field's).
pub(super) fn serde_rename(attributes: &[syn::Attribute]) -> Option<String> {
    let mut renamed = None;
    for attribute in attributes.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                renamed = Some(meta.value()?.parse::<syn::LitStr>()?.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    renamed
}

/// The name of the variant a value the document does not list reads as.
pub(crate) const UNKNOWN_VARIANT: &str = "Unknown";

/// Every enum of string values takes a value the document does not list as its `Unknown`
/// variant instead of failing the whole response: a later minor version of the document may add
/// values to an enum a response carries (new statuses, new event names), and a client built on
/// an earlier one must go on reading. `Unknown` cannot be sent (serialising it is an error), and
/// the server never sees one (it validates requests against the document before reading them).
/// An enum that already has a variant of that name is left as it is.
fn open_enums(file: &mut syn::File) {
    use syn::visit_mut::VisitMut;
    struct Open {
        opened: BTreeSet<String>,
    }
    impl VisitMut for Open {
        fn visit_item_enum_mut(&mut self, item: &mut syn::ItemEnum) {
            let serde_attribute = |attribute: &syn::Attribute| attribute.path().is_ident("serde");
            let renamed = |variant: &syn::Variant| serde_rename(&variant.attrs).is_some();
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
}

/// The name of the type an impl is for, when it is a plain name (`impl … for Name`).
pub(super) fn self_name(item: &syn::ItemImpl) -> Option<String> {
    match item.self_ty.as_ref() {
        syn::Type::Path(ty) => ty.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

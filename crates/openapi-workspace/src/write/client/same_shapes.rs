//! Models of one shape written once. A document repeats small inline shapes in many places
//! (an enum of `read`/`write` under each of a hundred permission properties, a `type` of `Bot`,
//! `User`, `Organization` under every user object), and typify writes each as a model of its own
//! with its own impls. Two enums alike in every token but their names and docs become one: the
//! first keeps its definition, the others become `pub type Other = First;` with their own docs.
//! Fields, parameters and the client name them as before; only their impls are not written
//! again. Component schemas keep a model of their own (`components::ALL` names each by its
//! schema): they are never made aliases, though an inline shape may become an alias of one.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::ToTokens;

use super::models::self_name;

/// Makes every enum of `file` that repeats an earlier one's shape an alias of it; `own` are the
/// names that must keep their own models. Answers how many became aliases.
pub(super) fn written_once(file: &mut syn::File, own: &BTreeSet<String>) -> usize {
    // Each enum's impls, by the enum's name (`impl … for Name`): part of its shape.
    let enums: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Enum(item) => Some(item.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut impls: BTreeMap<String, Vec<TokenStream>> = BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Impl(item) = item
            && let Some(name) = self_name(item).filter(|name| enums.contains(name))
        {
            impls.entry(name.clone()).or_default().push(renamed(item.to_token_stream(), &name));
        }
    }
    // The first enum of each shape, by the shape's tokens.
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    let mut alias: BTreeMap<String, String> = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Enum(item) = item else { continue };
        let name = item.ident.to_string();
        let mut shape = item.clone();
        shape.attrs.retain(|a| !a.path().is_ident("doc"));
        let mut key = renamed(shape.to_token_stream(), &name);
        key.extend(impls.get(&name).into_iter().flatten().cloned());
        match first.entry(key.to_string()) {
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(name);
            }
            std::collections::btree_map::Entry::Occupied(entry) if !own.contains(&name) => {
                alias.insert(name, entry.get().clone());
            }
            std::collections::btree_map::Entry::Occupied(_) => {}
        }
    }
    if alias.is_empty() {
        return 0;
    }
    let mut items = Vec::with_capacity(file.items.len());
    for item in std::mem::take(&mut file.items) {
        match item {
            syn::Item::Enum(item) if alias.contains_key(&item.ident.to_string()) => {
                let target = quote::format_ident!("{}", alias[&item.ident.to_string()]);
                let docs = item.attrs.iter().filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"));
                let (vis, ident) = (&item.vis, &item.ident);
                items.push(syn::parse_quote!(#(#docs)* #vis type #ident = #target;));
            }
            syn::Item::Impl(item) if self_name(&item).is_some_and(|name| alias.contains_key(&name)) => {}
            item => items.push(item),
        }
    }
    file.items = items;
    dropped_twins(file, &alias);
    alias.len()
}

/// `tokens` with every `name` in them written `Self`: two items alike but for their names
/// become the same tokens.
fn renamed(tokens: TokenStream, name: &str) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Ident(ident) if ident == name => TokenTree::Ident(Ident::new("Self", ident.span())),
            TokenTree::Group(group) => {
                let mut renamed = proc_macro2::Group::new(group.delimiter(), renamed(group.stream(), name));
                renamed.set_span(group.span());
                TokenTree::Group(renamed)
            }
            tree => tree,
        })
        .collect()
}

/// Two impls of one trait for one type once its aliases are read as what they name (a union's
/// `From<A>` and `From<B>` when `B` is now `A`): the one naming an alias is dropped — it
/// converted the same type the same way.
fn dropped_twins(file: &mut syn::File, alias: &BTreeMap<String, String>) {
    // The trait and type an impl is of, aliases read as their targets; whether it named one.
    let of = |item: &syn::ItemImpl| -> Option<(String, bool)> {
        let (path, _) = item.trait_.as_ref()?;
        let mut aliased = false;
        let mut text = String::new();
        resolved(path.to_token_stream(), alias, &mut text, &mut aliased);
        text.push_str(" for ");
        resolved(item.self_ty.to_token_stream(), alias, &mut text, &mut aliased);
        Some((text, aliased))
    };
    let keys: Vec<Option<(String, bool)>> = file
        .items
        .iter()
        .map(|item| match item {
            syn::Item::Impl(item) => of(item),
            _ => None,
        })
        .collect();
    let mut seen: BTreeSet<&String> =
        keys.iter().flatten().filter(|(_, aliased)| !aliased).map(|(text, _)| text).collect();
    let mut keys = keys.iter();
    file.items.retain(|_| match keys.next().and_then(Option::as_ref) {
        Some((text, true)) => seen.insert(text),
        _ => true,
    });
}

/// `tokens` as text into `text`, each alias written as its target; `aliased` set if one was.
fn resolved(tokens: TokenStream, alias: &BTreeMap<String, String>, text: &mut String, aliased: &mut bool) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                match alias.get(&name) {
                    Some(target) => {
                        *aliased = true;
                        text.push_str(target);
                    }
                    None => text.push_str(&name),
                }
            }
            TokenTree::Group(group) => {
                text.push_str(&format!("{:?}(", group.delimiter()));
                resolved(group.stream(), alias, text, aliased);
                text.push(')');
            }
            tree => text.push_str(&tree.to_string()),
        }
        text.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    #[test]
    fn enums_of_one_shape_become_aliases_of_the_first_and_their_twin_impls_go() {
        let mut file: syn::File = syn::parse_quote! {
            /// The first.
            pub enum Access { Read, Write }
            impl ::std::fmt::Display for Access { fn fmt(&self) -> &str { "read" } }
            /// The second.
            pub enum Checks { Read, Write }
            impl ::std::fmt::Display for Checks { fn fmt(&self) -> &str { "read" } }
            /// A component of the same shape keeps its own model.
            pub enum Permission { Read, Write }
            impl ::std::fmt::Display for Permission { fn fmt(&self) -> &str { "read" } }
            /// Alike but for an impl: kept.
            pub enum Other { Read, Write }
            impl ::std::fmt::Display for Other { fn fmt(&self) -> &str { "other" } }
            pub enum Either { A(Access), B(Checks) }
            impl ::std::convert::From<Access> for Either { fn from(value: Access) -> Self { Self::A(value) } }
            impl ::std::convert::From<Checks> for Either { fn from(value: Checks) -> Self { Self::B(value) } }
        };
        let own = BTreeSet::from(["Permission".to_owned()]);
        assert_eq!(super::written_once(&mut file, &own), 1);
        let text = prettyplease::unparse(&file);
        assert!(text.contains("/// The second.\npub type Checks = Access;"), "{text}");
        assert!(text.contains("pub enum Permission"), "{text}");
        assert!(text.contains("pub enum Other"), "{text}");
        assert_eq!(text.matches("for Either").count(), 1, "{text}");
        assert_eq!(text.matches("Display for").count(), 3, "{text}");
    }
}

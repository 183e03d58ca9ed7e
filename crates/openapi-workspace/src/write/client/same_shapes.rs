//! Models of one shape written once. A document repeats small inline shapes in many places
//! (an enum of `read`/`write` under each of a hundred permission properties, a `type` of `Bot`,
//! `User`, `Organization` under every user object), and typify writes each as a model of its own
//! with its own impls. Two models (enums, and structs with named fields) alike in every token
//! but their names and docs become one: the first keeps its definition, the others become
//! `pub type Other = First;` with their own docs. Fields, parameters and the client name them as
//! before; only their definitions and impls are not written again. Component schemas keep a model
//! of their own (`components::ALL` names each by its schema): they are never made aliases, and an
//! inline shape that repeats one becomes its alias.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

use super::models::self_name;

/// Makes every model of `file` that repeats an earlier one's shape an alias of it; `own` are the
/// names that must keep their own models, and so must `built`, the models with a builder (one a
/// request carries): `builder::X` and `X::builder()` are its, and an alias's target may have no
/// builder. Answers how many became aliases.
pub(super) fn written_once(file: &mut syn::File, own: &BTreeSet<String>, built: &BTreeSet<String>) -> usize {
    // The models that may become aliases: enums, and structs with named fields (a tuple struct's
    // name is also its constructor, which an alias is not).
    let shape_of = |item: &syn::Item| -> Option<(String, syn::Item)> {
        let (name, mut shape) = match item {
            syn::Item::Enum(model) => (model.ident.to_string(), item.clone()),
            syn::Item::Struct(model) if matches!(model.fields, syn::Fields::Named(_)) => {
                (model.ident.to_string(), item.clone())
            }
            _ => return None,
        };
        if built.contains(&name) {
            return None;
        }
        match &mut shape {
            syn::Item::Enum(model) => model.attrs.retain(|a| !a.path().is_ident("doc")),
            syn::Item::Struct(model) => model.attrs.retain(|a| !a.path().is_ident("doc")),
            _ => {}
        }
        Some((name, shape))
    };
    let shapes: Vec<(String, syn::Item)> = file.items.iter().filter_map(shape_of).collect();
    // Each model's impls, by the model's name (`impl … for Name`): part of its shape.
    let mut impls: BTreeMap<&str, Vec<&syn::ItemImpl>> = BTreeMap::new();
    let names: BTreeSet<&str> = shapes.iter().map(|(name, _)| name.as_str()).collect();
    for item in &file.items {
        if let syn::Item::Impl(item) = item
            && let Some(name) = self_name(item)
            && let Some(name) = names.get(name.as_str())
        {
            impls.entry(name).or_default().push(item);
        }
    }
    // Each shape once as flat tokens, its identifiers numbered (`Words`): its keys are hashed
    // from these, renamed by number, rather than printed again in each round.
    let mut words = Words::default();
    let mut shapes: Vec<(&str, usize, Vec<Token>)> = shapes
        .iter()
        .map(|(name, shape)| {
            let mut tokens = shape.to_token_stream();
            impls.get(name.as_str()).into_iter().flatten().for_each(|item| item.to_tokens(&mut tokens));
            let mut flat = Vec::new();
            words.flatten(tokens, &mut flat);
            (name.as_str(), words.number(name), flat)
        })
        .collect();
    // The models that keep their own come first, so an inline shape that repeats a component
    // becomes an alias of the component's model rather than keep a copy beside it.
    shapes.sort_by_key(|(name, ..)| !own.contains(*name));
    // The first model of each shape, by the shape's tokens with aliases read as what they name;
    // again until no new alias is found (a struct of aliased fields may now repeat another). A
    // round keys again only the shapes that name a model whose alias just changed.
    let is_model: BTreeSet<usize> = shapes.iter().map(|(_, word, _)| *word).collect();
    let self_word = words.number("Self");
    let mut renames: BTreeMap<usize, usize> = BTreeMap::new();
    let mut keys: Vec<u128> = shapes.iter().map(|(_, word, flat)| key(flat, *word, self_word, &renames)).collect();
    let named: Vec<BTreeSet<usize>> = shapes
        .iter()
        .map(|(.., flat)| {
            flat.iter()
                .filter_map(|token| match token {
                    Token::Word(word) if is_model.contains(word) => Some(*word),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut alias: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let mut first: BTreeMap<u128, &str> = BTreeMap::new();
        let mut new = Vec::new();
        for ((name, ..), key) in shapes.iter().zip(&keys) {
            if alias.contains_key(*name) {
                continue;
            }
            match first.entry(*key) {
                std::collections::btree_map::Entry::Vacant(entry) => {
                    entry.insert(name);
                }
                std::collections::btree_map::Entry::Occupied(entry) if !own.contains(*name) => {
                    new.push((name.to_string(), entry.get().to_string()));
                }
                std::collections::btree_map::Entry::Occupied(_) => {}
            }
        }
        if new.is_empty() {
            break;
        }
        alias.extend(new);
        // Every alias by number, to the end of its chain; which changed this round.
        let now: BTreeMap<usize, usize> = alias
            .keys()
            .map(|name| (words.number(name), words.number(target(&alias, name).expect("an alias"))))
            .collect();
        let changed: BTreeSet<usize> =
            now.iter().filter(|(word, to)| renames.get(*word) != Some(*to)).map(|(word, _)| *word).collect();
        renames = now;
        for (at, (name, word, flat)) in shapes.iter().enumerate() {
            if !alias.contains_key(*name) && named[at].iter().any(|model| changed.contains(model)) {
                keys[at] = key(flat, *word, self_word, &renames);
            }
        }
    }
    if alias.is_empty() {
        return 0;
    }
    let mut items = Vec::with_capacity(file.items.len());
    for item in std::mem::take(&mut file.items) {
        let (attrs, vis, ident) = match &item {
            syn::Item::Enum(model) => (&model.attrs, &model.vis, &model.ident),
            syn::Item::Struct(model) => (&model.attrs, &model.vis, &model.ident),
            syn::Item::Impl(model) if self_name(model).is_some_and(|name| alias.contains_key(&name)) => continue,
            _ => {
                items.push(item);
                continue;
            }
        };
        match alias.get(&ident.to_string()) {
            Some(target) => {
                let target = quote::format_ident!("{target}");
                let docs = attrs.iter().filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"));
                items.push(syn::parse_quote!(#(#docs)* #vis type #ident = #target;));
            }
            None => items.push(item),
        }
    }
    file.items = items;
    dropped_twins(file, &alias);
    alias.len()
}

/// A token of a shape, flat: an identifier by its number, a group as its opening and closing.
enum Token {
    Word(usize),
    Punct(char, bool),
    Literal(String),
    Open(u8),
    Close,
}

/// The identifiers of the shapes, numbered.
#[derive(Default)]
struct Words(std::collections::HashMap<String, usize>);

impl Words {
    fn number(&mut self, word: &str) -> usize {
        if let Some(number) = self.0.get(word) {
            return *number;
        }
        let next = self.0.len();
        self.0.insert(word.to_owned(), next);
        next
    }

    fn flatten(&mut self, tokens: TokenStream, out: &mut Vec<Token>) {
        for tree in tokens {
            match tree {
                TokenTree::Ident(ident) => out.push(Token::Word(self.number(&ident.to_string()))),
                TokenTree::Punct(punct) => {
                    out.push(Token::Punct(punct.as_char(), punct.spacing() == proc_macro2::Spacing::Joint))
                }
                TokenTree::Literal(literal) => out.push(Token::Literal(literal.to_string())),
                TokenTree::Group(group) => {
                    out.push(Token::Open(match group.delimiter() {
                        Delimiter::Parenthesis => 0,
                        Delimiter::Brace => 1,
                        Delimiter::Bracket => 2,
                        Delimiter::None => 3,
                    }));
                    self.flatten(group.stream(), out);
                    out.push(Token::Close);
                }
            }
        }
    }
}

/// A shape's key: its tokens hashed with its own name read as `Self` and every alias as what it
/// names, so two models alike but for their names have one key. 128 bits (two hashes): two
/// shapes of a document share one only if they are alike.
fn key(tokens: &[Token], own: usize, self_word: usize, renames: &BTreeMap<usize, usize>) -> u128 {
    use std::hash::{Hash, Hasher};
    let mut hashers = [std::hash::DefaultHasher::new(), std::hash::DefaultHasher::new()];
    hashers[1].write_u8(1);
    for token in tokens {
        for hasher in &mut hashers {
            match token {
                Token::Word(word) => {
                    let word = if *word == own { self_word } else { *renames.get(word).unwrap_or(word) };
                    (0u8, word).hash(hasher);
                }
                Token::Punct(c, joint) => (1u8, *c, *joint).hash(hasher),
                Token::Literal(text) => (2u8, text).hash(hasher),
                Token::Open(delimiter) => (3u8, *delimiter).hash(hasher),
                Token::Close => 4u8.hash(hasher),
            }
        }
    }
    (u128::from(hashers[0].finish()) << 64) | u128::from(hashers[1].finish())
}

/// What `name` is an alias of, to the end of the chain (a target may have become an alias in a
/// later round); `None` for a model that is not one.
fn target<'a>(alias: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    let mut found = None;
    let mut at = name;
    while let Some(next) = alias.get(at) {
        found = Some(next.as_str());
        at = next;
    }
    found
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
                match target(alias, &name) {
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
            /// Of the same shape again.
            pub enum Permission { Read, Write }
            impl ::std::fmt::Display for Permission { fn fmt(&self) -> &str { "read" } }
            /// Alike but for an impl: kept.
            pub enum Other { Read, Write }
            impl ::std::fmt::Display for Other { fn fmt(&self) -> &str { "other" } }
            pub enum Either { A(Access), B(Checks) }
            impl ::std::convert::From<Access> for Either { fn from(value: Access) -> Self { Self::A(value) } }
            impl ::std::convert::From<Checks> for Either { fn from(value: Checks) -> Self { Self::B(value) } }
        };
        assert_eq!(super::written_once(&mut file, &BTreeSet::new(), &BTreeSet::new()), 2);
        let text = prettyplease::unparse(&file);
        assert!(text.contains("/// The second.\npub type Checks = Access;"), "{text}");
        assert!(text.contains("/// Of the same shape again.\npub type Permission = Access;"), "{text}");
        assert!(text.contains("pub enum Other"), "{text}");
        assert_eq!(text.matches("for Either").count(), 1, "{text}");
        assert_eq!(text.matches("Display for").count(), 2, "{text}");
        // Made a component, `Permission` keeps its model and the inline shapes become its aliases.
        let mut file: syn::File = syn::parse_quote! {
            pub enum Access { Read, Write }
            pub enum Checks { Read, Write }
            pub enum Permission { Read, Write }
        };
        let own = BTreeSet::from(["Permission".to_owned()]);
        assert_eq!(super::written_once(&mut file, &own, &BTreeSet::new()), 2);
        let text = prettyplease::unparse(&file);
        assert!(
            text.contains("pub type Access = Permission;\npub type Checks = Permission;\npub enum Permission"),
            "{text}"
        );
    }

    #[test]
    fn structs_of_one_shape_become_aliases_once_their_fields_name_the_same_models() {
        let mut file: syn::File = syn::parse_quote! {
            pub enum Access { Read, Write }
            pub enum Checks { Read, Write }
            /// The first owner.
            pub struct Owner { pub access: Access, pub login: String }
            impl ::std::convert::From<&Owner> for Owner { fn from(value: &Owner) -> Self { value.clone() } }
            /// The second owner: alike once `Checks` is `Access`.
            pub struct Author { pub access: Checks, pub login: String }
            impl ::std::convert::From<&Author> for Author { fn from(value: &Author) -> Self { value.clone() } }
            /// A request's body, which has a builder: kept.
            pub struct Sent { pub access: Access, pub login: String }
            impl ::std::convert::From<&Sent> for Sent { fn from(value: &Sent) -> Self { value.clone() } }
            /// An inline shape written before the component it repeats: the component's alias.
            pub struct Inline { pub id: i64 }
            pub struct Component { pub id: i64 }
            /// A tuple struct: its name is its constructor, kept.
            pub struct Login(pub String);
            pub struct Name(pub String);
        };
        let own = BTreeSet::from(["Component".to_owned()]);
        assert_eq!(super::written_once(&mut file, &own, &BTreeSet::from(["Sent".to_owned()])), 3);
        let text = prettyplease::unparse(&file);
        assert!(text.contains("pub type Checks = Access;"), "{text}");
        assert!(
            text.contains("/// The second owner: alike once `Checks` is `Access`.\npub type Author = Owner;"),
            "{text}"
        );
        assert!(text.contains("pub struct Sent {"), "{text}");
        assert!(text.contains("pub type Inline = Component;"), "{text}");
        assert!(text.contains("pub struct Name(pub String);"), "{text}");
        assert_eq!(text.matches("for Author").count(), 0, "{text}");
    }
}

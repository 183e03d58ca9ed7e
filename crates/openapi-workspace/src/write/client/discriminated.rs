//! A union told apart by a `discriminator` (`model::discriminator`) reads its tag before its arm.
//! typify writes it `#[serde(untagged)]`, which takes the first arm a value fits: with arms that
//! overlap, often the wrong one. Its `Deserialize` is written here instead, dispatching on the
//! tag (a tag that names no arm: the union's default arm if it has one, else refused), and on a
//! value without one (the tag is optional in many documents' arms) taking the first
//! arm that fits, as before; `Serialize` stays untagged, since each arm's value carries its tag.

use heck::ToUpperCamelCase;
use quote::{format_ident, quote};

use crate::model::discriminator;
use crate::read::Spec;

/// Gives every discriminated union of the document's components among `types` its tag-first
/// `Deserialize`. A union typify did not write as an untagged enum of its arms is left as it is.
pub(super) fn tags_first(types: &mut syn::File, spec: &Spec) {
    let mut written = Vec::new();
    for (name, schema) in spec.component_schemas() {
        let Some(discriminator) = schema.as_object().and_then(discriminator::of) else { continue };
        let rust_name = name.to_upper_camel_case();
        let Some(union) = types.items.iter_mut().find_map(|item| match item {
            syn::Item::Enum(item) if item.ident == rust_name && untagged(item) => Some(item),
            _ => None,
        }) else {
            continue;
        };
        // Each tagged arm's variant: the one holding the arm's model.
        let variants: Option<Vec<(&syn::Ident, &[String])>> = discriminator
            .arms
            .iter()
            .map(|arm| {
                let model = arm.component.to_upper_camel_case();
                let variant = union.variants.iter().find(|variant| holds(variant, &model))?;
                Some((&variant.ident, arm.tags.as_slice()))
            })
            .collect();
        // Every variant an arm with a tag: a union with other arms stays as typify wrote it.
        let Some(variants) = variants.filter(|variants| variants.len() == union.variants.len()) else { continue };
        let property = &discriminator.property;
        let all: Vec<&str> = variants.iter().flat_map(|(_, tags)| tags.iter().map(String::as_str)).collect();
        let escaped = |text: &str| text.replace('{', "{{").replace('}', "}}");
        let unknown = format!(
            "{} {{other:?}} names no arm of {rust_name} (one of {})",
            escaped(property),
            escaped(&all.join(", "))
        );
        let missing = format!("a {rust_name} without {property} fits none of its arms");
        let mut tried = std::collections::BTreeSet::new();
        let in_order = variants.iter().filter(|(variant, _)| tried.insert(*variant)).map(|(variant, _)| {
            quote! {
                if let Ok(arm) = ::serde_json::from_value(value.clone()) {
                    return Ok(Self::#variant(arm));
                }
            }
        });
        // The default arm is read by the catch-all below, its own tags too. A tag two arms name
        // (two mappings to one component) is the first's: a second match arm could never be reached.
        let mut claimed = std::collections::BTreeSet::new();
        let tagged = variants.iter().enumerate().filter(|(place, _)| discriminator.fallback != Some(*place));
        let arms: Vec<proc_macro2::TokenStream> = tagged
            .filter_map(|(_, (variant, tags))| {
                let tags: Vec<&String> = tags.iter().filter(|tag| claimed.insert(tag.as_str())).collect();
                (!tags.is_empty()).then(|| {
                    quote! { Some(#(#tags)|*) => ::serde_json::from_value(value).map(Self::#variant).map_err(invalid) }
                })
            })
            .collect();
        // A tag that names no arm: the default arm's, else refused.
        let other = match discriminator.fallback.map(|place| variants[place].0) {
            Some(variant) => quote! { Some(_) => ::serde_json::from_value(value).map(Self::#variant).map_err(invalid) },
            None => quote! { Some(other) => Err(invalid(format!(#unknown))) },
        };
        let ident = &union.ident;
        written.push(syn::parse_quote! {
            impl<'de> ::serde::Deserialize<'de> for #ident {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                    fn invalid<E: ::serde::de::Error, M: ::std::fmt::Display>(message: M) -> E {
                        E::custom(message)
                    }
                    let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(deserializer)?;
                    match value.get(#property).and_then(::serde_json::Value::as_str) {
                        #(#arms,)*
                        #other,
                        None => {
                            #(#in_order)*
                            Err(invalid(#missing))
                        }
                    }
                }
            }
        });
        super::models::without_derive(&mut union.attrs, "Deserialize");
    }
    types.items.extend(written.into_iter().map(syn::Item::Impl));
}

fn untagged(item: &syn::ItemEnum) -> bool {
    item.attrs.iter().any(|attribute| {
        attribute.path().is_ident("serde") && quote!(#attribute).to_string().replace(' ', "").contains("(untagged)")
    })
}

/// Whether `variant` is a newtype variant holding the model `model`.
fn holds(variant: &syn::Variant, model: &str) -> bool {
    let syn::Fields::Unnamed(fields) = &variant.fields else { return false };
    let [field] = fields.unnamed.iter().collect::<Vec<_>>()[..] else { return false };
    matches!(&field.ty, syn::Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == format_ident!("{model}")))
}

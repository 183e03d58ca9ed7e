//! Models and client, both from progenitor: its type space (typify 0.8) becomes the types
//! crate, and its client refers to that crate instead of carrying a second copy.

use std::collections::BTreeSet;

use progenitor::{GenerationSettings, Generator, InterfaceStyle, TagStyle};
use proc_macro2::TokenStream;

use crate::{Config, Error, Result, spec::Spec};

pub struct Models {
    pub types: TokenStream,
    pub client: TokenStream,
    /// Rust names of every generated model, for the server generator to check its references.
    pub type_names: BTreeSet<String>,
}

pub fn generate(spec: &Spec, config: &Config) -> Result<Models> {
    let mut settings = GenerationSettings::default();
    settings
        .with_interface(InterfaceStyle::Builder)
        .with_tag(TagStyle::Merged)
        .with_derive("PartialEq")
        .with_derive("schemars::JsonSchema");
    let mut generator = Generator::new(&settings);
    let client = generator
        .generate_tokens(&spec.openapi)
        .map_err(|e| Error(format!("progenitor: {e}")))?;
    let type_space = generator.get_type_space();
    let type_names = type_space.iter_types().map(|t| t.name()).collect();
    let types = type_space.to_stream();
    Ok(Models {
        types,
        client: replace_types_module(client, &config.types_path)?,
        type_names,
    })
}

/// progenitor puts the models in `pub mod types { .. }` inside the client; swap that module for
/// a re-export of the types crate so client and server share one set of models.
fn replace_types_module(client: TokenStream, types_path: &str) -> Result<TokenStream> {
    let mut file: syn::File = syn::parse2(client)
        .map_err(|e| Error(format!("progenitor's client does not parse: {e}")))?;
    let path: syn::Path = syn::parse_str(types_path)
        .map_err(|e| Error(format!("types path {types_path:?}: {e}")))?;
    let position = file
        .items
        .iter()
        .position(|item| matches!(item, syn::Item::Mod(m) if m.ident == "types"))
        .ok_or_else(|| Error("progenitor's client has no `types` module".into()))?;
    file.items[position] = syn::parse_quote! {
        /// The models, from the shared types crate.
        pub use #path as types;
    };
    Ok(quote::quote!(#file))
}

//! A parameter's wire form ([`Wire`]) as a constant of the runtime's `wire` module: how the
//! server's router and the client's request hook are told how each parameter is written.

use proc_macro2::TokenStream;
use quote::quote;

use crate::read::wire::{Leaf, Shape, Wire};

/// The wire as a constant of `openapi_workspace_runtime::wire`, which the generated code names
/// `module`: a struct literal, which a `&'static` slice of them can hold.
pub(crate) fn tokens(wire: &Wire, module: &TokenStream) -> TokenStream {
    let name = &wire.name;
    let explode = wire.explode;
    let place = quote::format_ident!("{}", format!("{:?}", wire.place));
    let style = quote::format_ident!("{}", format!("{:?}", wire.style));
    let shape = shape(&wire.shape, &quote!(#module::));
    quote! {
        #module::Wire {
            place: #module::Place::#place,
            name: #name,
            style: #module::Style::#style,
            explode: #explode,
            shape: #shape,
        }
    }
}

/// The wire as the generated server writes it, a line each: `Wire::query("limit", Style::Form,
/// true, Shape::Scalar(Leaf::Integer))`, the module's types in scope (`write/server/mod.rs`).
pub(crate) fn constructed(wire: &Wire) -> TokenStream {
    let name = &wire.name;
    let explode = wire.explode;
    let place = quote::format_ident!("{}", format!("{:?}", wire.place).to_lowercase());
    let style = quote::format_ident!("{}", format!("{:?}", wire.style));
    let shape = shape(&wire.shape, &TokenStream::new());
    quote!(Wire::#place(#name, Style::#style, #explode, #shape))
}

/// The shape, its types named after `prefix` (a module path and `::`, or nothing).
fn shape(shape: &Shape, prefix: &TokenStream) -> TokenStream {
    let module = prefix;
    let leaf = |leaf: &Leaf| {
        let leaf = quote::format_ident!("{leaf:?}");
        quote!(#module Leaf::#leaf)
    };
    let fields = |fields: &[(String, Leaf)]| {
        let fields = fields.iter().map(|(field, l)| {
            let l = leaf(l);
            quote!((#field, #l))
        });
        quote!(&[#(#fields),*])
    };
    match shape {
        Shape::Scalar(l) => {
            let l = leaf(l);
            quote!(#module Shape::Scalar(#l))
        }
        Shape::Array(l) => {
            let l = leaf(l);
            quote!(#module Shape::Array(#l))
        }
        Shape::Object(properties) => {
            let properties = fields(properties);
            quote!(#module Shape::Object(#properties))
        }
        Shape::ScalarOrObject(scalar, properties) => {
            let (scalar, properties) = (leaf(scalar), fields(properties));
            quote!(#module Shape::ScalarOrObject(#scalar, #properties))
        }
        Shape::Nested => quote!(#module Shape::Nested),
        Shape::Opaque => quote!(#module Shape::Opaque),
    }
}

//! A parameter's wire form ([`Wire`]) as a constant of the runtime's `wire` module: how the
//! server's router and the client's request hook are told how each parameter is written.

use proc_macro2::TokenStream;
use quote::quote;

use crate::read::wire::{Leaf, Shape, Wire};

/// The wire as a constant of `openapi_workspace_runtime::wire`, which the generated code names
/// `module`.
pub(crate) fn tokens(wire: &Wire, module: &TokenStream) -> TokenStream {
    let name = &wire.name;
    let explode = wire.explode;
    let place = quote::format_ident!("{}", format!("{:?}", wire.place));
    let style = quote::format_ident!("{}", format!("{:?}", wire.style));
    let leaf = |leaf: &Leaf| {
        let leaf = quote::format_ident!("{leaf:?}");
        quote!(#module::Leaf::#leaf)
    };
    let fields = |fields: &[(String, Leaf)]| {
        let fields = fields.iter().map(|(field, l)| {
            let l = leaf(l);
            quote!((#field, #l))
        });
        quote!(&[#(#fields),*])
    };
    let shape = match &wire.shape {
        Shape::Scalar(l) => {
            let l = leaf(l);
            quote!(#module::Shape::Scalar(#l))
        }
        Shape::Array(l) => {
            let l = leaf(l);
            quote!(#module::Shape::Array(#l))
        }
        Shape::Object(properties) => {
            let properties = fields(properties);
            quote!(#module::Shape::Object(#properties))
        }
        Shape::ScalarOrObject(scalar, properties) => {
            let (scalar, properties) = (leaf(scalar), fields(properties));
            quote!(#module::Shape::ScalarOrObject(#scalar, #properties))
        }
        Shape::Nested => quote!(#module::Shape::Nested),
        Shape::Opaque => quote!(#module::Shape::Opaque),
    };
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

//! Doc comments as one `///` line per line of text. prettyplease prints a multi-line `#[doc]`
//! as a `/** ... */` block, whose continuation lines rustfmt re-indents — and indented lines
//! in a doc comment are code blocks (doctests) to rustdoc. One attribute per line prints as
//! `///` lines, which every formatter leaves as they are.

use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, ExprLit, ImplItem, Item, Lit, Meta, TraitItem};

pub(crate) fn split_doc_lines(file: &mut syn::File) {
    DocLines.visit_file_mut(file);
}

struct DocLines;

/// Replaces each multi-line `#[doc = "..."]` in `attrs` by one attribute per line.
fn split(attrs: &mut Vec<Attribute>) {
    let mut result = Vec::with_capacity(attrs.len());
    for attr in attrs.drain(..) {
        let text = match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                // A carriage return is a line break too: alone in a `///` line it does not lex.
                Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) if text.value().contains(['\n', '\r']) => {
                    Some(text.value().replace("\r\n", "\n").replace('\r', "\n"))
                }
                _ => None,
            },
            _ => None,
        };
        match text {
            Some(text) => {
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let outer = matches!(attr.style, syn::AttrStyle::Outer);
                for line in text.split('\n') {
                    // `/// text`: one space after the slashes, which rustdoc strips from every line.
                    let line = if line.is_empty() { String::new() } else { format!(" {line}") };
                    result.push(if outer {
                        syn::parse_quote!(#[doc = #line])
                    } else {
                        syn::parse_quote!(#![doc = #line])
                    });
                }
            }
            None => result.push(attr),
        }
    }
    *attrs = result;
}

impl VisitMut for DocLines {
    fn visit_item_mut(&mut self, item: &mut Item) {
        let attrs = match item {
            Item::Const(i) => &mut i.attrs,
            Item::Enum(i) => &mut i.attrs,
            Item::ExternCrate(i) => &mut i.attrs,
            Item::Fn(i) => &mut i.attrs,
            Item::ForeignMod(i) => &mut i.attrs,
            Item::Impl(i) => &mut i.attrs,
            Item::Macro(i) => &mut i.attrs,
            Item::Mod(i) => &mut i.attrs,
            Item::Static(i) => &mut i.attrs,
            Item::Struct(i) => &mut i.attrs,
            Item::Trait(i) => &mut i.attrs,
            Item::TraitAlias(i) => &mut i.attrs,
            Item::Type(i) => &mut i.attrs,
            Item::Union(i) => &mut i.attrs,
            Item::Use(i) => &mut i.attrs,
            _ => return syn::visit_mut::visit_item_mut(self, item),
        };
        split(attrs);
        syn::visit_mut::visit_item_mut(self, item);
    }

    fn visit_impl_item_mut(&mut self, item: &mut ImplItem) {
        match item {
            ImplItem::Const(i) => split(&mut i.attrs),
            ImplItem::Fn(i) => split(&mut i.attrs),
            ImplItem::Type(i) => split(&mut i.attrs),
            ImplItem::Macro(i) => split(&mut i.attrs),
            _ => {}
        }
        syn::visit_mut::visit_impl_item_mut(self, item);
    }

    fn visit_trait_item_mut(&mut self, item: &mut TraitItem) {
        match item {
            TraitItem::Const(i) => split(&mut i.attrs),
            TraitItem::Fn(i) => split(&mut i.attrs),
            TraitItem::Type(i) => split(&mut i.attrs),
            TraitItem::Macro(i) => split(&mut i.attrs),
            _ => {}
        }
        syn::visit_mut::visit_trait_item_mut(self, item);
    }

    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        split(&mut field.attrs);
        syn::visit_mut::visit_field_mut(self, field);
    }

    fn visit_variant_mut(&mut self, variant: &mut syn::Variant) {
        split(&mut variant.attrs);
        syn::visit_mut::visit_variant_mut(self, variant);
    }

    fn visit_file_mut(&mut self, file: &mut syn::File) {
        split(&mut file.attrs);
        syn::visit_mut::visit_file_mut(self, file);
    }
}

//! progenitor's `pub mod builder` (a struct and its impl per operation) is most of a client: nine
//! tenths of Amazon EC2's. Its syntax tree whole, beside the models', was the generator's peak of
//! memory on the largest documents, so the module is read a member at a time: each member parsed,
//! edited and gated as the rest of the client is, read for the samples, printed, and dropped
//! before the next is parsed. The printed members are put back in the module's place, as
//! prettyplease prints a module's items (one after another, indented once): the text is the one
//! the client printed whole would have.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// The client's tokens with its `builder` module's body taken out (the module left empty), and
/// that body's tokens; the body is empty when the client has no such module.
pub(super) fn take_body(client: TokenStream) -> (TokenStream, Vec<TokenTree>) {
    let mut trees: Vec<TokenTree> = client.into_iter().collect();
    let at = trees.windows(3).position(|window| {
        matches!(window, [TokenTree::Ident(keyword), TokenTree::Ident(name), TokenTree::Group(body)]
            if keyword == "mod" && name == "builder" && body.delimiter() == Delimiter::Brace)
    });
    let Some(at) = at else { return (trees.into_iter().collect(), Vec::new()) };
    let TokenTree::Group(body) =
        std::mem::replace(&mut trees[at + 2], Group::new(Delimiter::Brace, TokenStream::new()).into())
    else {
        unreachable!("found above")
    };
    (trees.into_iter().collect(), body.stream().into_iter().collect())
}

/// `member` as prettyplease prints it among the builder module's items: the module printed with
/// it alone, without the module's first and last lines.
pub(super) fn print_member(member: syn::Item) -> String {
    let module = syn::ItemMod {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        unsafety: None,
        mod_token: Default::default(),
        ident: quote::format_ident!("builder"),
        content: Some((Default::default(), vec![member])),
        semi: None,
    };
    let mut file: syn::File = syn::parse_quote! {};
    file.items.push(syn::Item::Mod(module));
    let printed = crate::write::print(file);
    let inside = printed.split_once('\n').map_or("", |(_, rest)| rest);
    inside.strip_suffix("}\n").unwrap_or(inside).to_owned()
}

/// The client printed with its builder module empty (`pub mod builder {}`), and that module's
/// `members` printed: the client as printed whole. `None` when members were printed but the
/// empty module is not in the text (nothing is ever dropped silently).
pub(super) fn put_back(client: String, members: &str) -> Option<String> {
    const EMPTY: &str = "\npub mod builder {}\n";
    let Some(at) = client.find(EMPTY) else { return members.is_empty().then_some(client) };
    let mut whole = String::with_capacity(client.len() + members.len() + 2);
    whole.push_str(&client[..at]);
    whole.push_str("\npub mod builder {\n");
    whole.push_str(members);
    whole.push_str("}\n");
    whole.push_str(&client[at + EMPTY.len()..]);
    Some(whole)
}

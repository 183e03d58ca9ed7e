//! Items of generated code too large to hold as one syntax tree, read a member at a time:
//! progenitor's `pub mod builder` (a struct and its impl per operation), most of a client (nine
//! tenths of Amazon EC2's), and its CLI's `impl<T: CliConfig> Cli<T>` (two functions per
//! operation), most of a CLI. Whole, beside the models', they were the generator's peak of
//! memory on the largest documents. The item's body is taken out of its tokens (the item left
//! empty), each member parsed, edited, printed and dropped before the next is parsed, and the
//! printed members put back in the item's place, as prettyplease prints an item's members (one
//! after another, indented once): the text is the one the whole item printed would have.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// `tokens` with the braced body of the first item whose tokens before it spell `head` taken out
/// (the item left empty), and that body's tokens; the body is empty when there is no such item.
pub(super) fn take_body(tokens: TokenStream, head: &[&str]) -> (TokenStream, Vec<TokenTree>) {
    let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
    let at = trees.windows(head.len() + 1).position(|window| {
        window.iter().zip(head).all(|(tree, word)| spelled(tree, word))
            && matches!(&window[head.len()], TokenTree::Group(body) if body.delimiter() == Delimiter::Brace)
    });
    let Some(at) = at.map(|at| at + head.len()) else { return (trees.into_iter().collect(), Vec::new()) };
    let TokenTree::Group(body) =
        std::mem::replace(&mut trees[at], Group::new(Delimiter::Brace, TokenStream::new()).into())
    else {
        unreachable!("found above")
    };
    (trees.into_iter().collect(), body.stream().into_iter().collect())
}

/// Whether `tree` is the identifier, or the one punctuation character, `word`.
fn spelled(tree: &TokenTree, word: &str) -> bool {
    match tree {
        TokenTree::Ident(ident) => ident == word,
        TokenTree::Punct(punct) => word.len() == 1 && word.starts_with(punct.as_char()),
        _ => false,
    }
}

/// `container` (an item holding one member) printed without its first and last lines: that
/// member as prettyplease prints it among the container's members.
pub(super) fn printed_inside(container: syn::Item) -> String {
    let mut file: syn::File = syn::parse_quote! {};
    file.items.push(container);
    let printed = crate::write::print(file);
    let inside = printed.split_once('\n').map_or("", |(_, rest)| rest);
    inside.strip_suffix("}\n").unwrap_or(inside).to_owned()
}

/// `printed`, where the item whose first line is `opening` (`pub mod builder`) is printed
/// empty, with `members` printed put back in it: the text as printed whole. `None` when members
/// were printed but the empty item is not in the text (nothing is ever dropped silently).
pub(super) fn put_back(printed: String, opening: &str, members: &str) -> Option<String> {
    let empty = format!("\n{opening} {{}}\n");
    let Some(at) = printed.find(&empty) else { return members.is_empty().then_some(printed) };
    let mut whole = String::with_capacity(printed.len() + members.len() + 2);
    whole.push_str(&printed[..at]);
    whole.push('\n');
    whole.push_str(opening);
    whole.push_str(" {\n");
    whole.push_str(members);
    whole.push_str("}\n");
    whole.push_str(&printed[at + empty.len()..]);
    Some(whole)
}

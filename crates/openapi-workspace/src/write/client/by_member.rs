//! Items of generated code too large to hold as one syntax tree, read a member at a time:
//! progenitor's `pub mod builder` (a struct and its impl per operation), most of a client (nine
//! tenths of Amazon EC2's), and its CLI's `impl<T: CliConfig> Cli<T>` (two functions per
//! operation), most of a CLI. Whole, beside the models', they were the generator's peak of
//! memory on the largest documents. The item's body is taken out of its tokens (the item left
//! empty), each member parsed, edited, printed and dropped before the next is parsed, and the
//! printed members put back in the item's place, as prettyplease prints an item's members (one
//! after another, indented once): the text is the one the whole item printed would have.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;

/// An item read a member at a time, written once, empty (`pub mod builder {}`): what its tokens
/// start with, how its first line prints, and the item each member is printed inside.
pub(super) struct Container<H> {
    empty: H,
    /// Its tokens before its braces, each as it is spelled.
    head: Vec<String>,
    /// Its first line as printed, without the brace (`pub mod builder`).
    opening: String,
}

/// An item whose members a [`Container`] holds: a module's items, an impl's.
pub(super) trait Holder: Clone {
    type Member;
    fn hold(&mut self, member: Self::Member);
    fn item(self) -> syn::Item;
}

impl Holder for syn::ItemMod {
    type Member = syn::Item;
    fn hold(&mut self, member: syn::Item) {
        self.content.get_or_insert_with(Default::default).1.push(member);
    }
    fn item(self) -> syn::Item {
        syn::Item::Mod(self)
    }
}

impl Holder for syn::ItemImpl {
    type Member = syn::ImplItem;
    fn hold(&mut self, member: syn::ImplItem) {
        self.items.push(member);
    }
    fn item(self) -> syn::Item {
        syn::Item::Impl(self)
    }
}

impl<H: Holder> Container<H> {
    pub(super) fn new(empty: H) -> Self {
        let item = empty.clone().item();
        let mut head: Vec<String> = item.to_token_stream().into_iter().map(|tree| tree.to_string()).collect();
        head.pop();
        let printed = print_alone(item);
        let opening = printed.trim_end().strip_suffix(" {}").unwrap_or(printed.trim_end()).to_owned();
        Self { empty, head, opening }
    }

    /// `tokens` with the braced body of the first item whose tokens before it are the
    /// container's taken out (the item left empty), and that body's tokens; the body is empty
    /// when there is no such item.
    pub(super) fn take_body(&self, tokens: TokenStream) -> (TokenStream, Vec<TokenTree>) {
        let head: Vec<&str> = self.head.iter().map(String::as_str).collect();
        let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
        let Some(at) = group_after(&trees, &head, Delimiter::Brace, false) else {
            return (trees.into_iter().collect(), Vec::new());
        };
        let TokenTree::Group(body) =
            std::mem::replace(&mut trees[at], Group::new(Delimiter::Brace, TokenStream::new()).into())
        else {
            unreachable!("found above")
        };
        (trees.into_iter().collect(), body.stream().into_iter().collect())
    }

    /// `member` as prettyplease prints it among the container's members: the container holding
    /// it alone, printed without its first and last lines.
    pub(super) fn printed(&self, member: H::Member) -> String {
        let mut container = self.empty.clone();
        container.hold(member);
        let printed = print_alone(container.item());
        let inside = printed.split_once('\n').map_or("", |(_, rest)| rest);
        inside.strip_suffix("}\n").unwrap_or(inside).to_owned()
    }

    /// `printed`, where the container is printed empty, with `members` printed put back in it:
    /// the text as printed whole. `None` when members were printed but the empty container is
    /// not in the text (nothing is ever dropped silently).
    pub(super) fn put_back(&self, printed: String, members: &str) -> Option<String> {
        if members.is_empty() {
            // As prettyplease prints an item without members: `pub mod builder {}`.
            return Some(printed);
        }
        let opening = &self.opening;
        let empty = format!("\n{opening} {{}}\n");
        let at = printed.find(&empty)?;
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
}

/// Where a group of `delimiter` comes right after the words of `head` among `trees`: the group's
/// index, the first such or (`last`) the last. Each word is spelled as its tree is (an
/// identifier, or a punctuation of one character); [`ANY`] is any identifier.
pub(super) fn group_after(trees: &[TokenTree], head: &[&str], delimiter: Delimiter, last: bool) -> Option<usize> {
    let found = |window: &[TokenTree]| {
        window.iter().zip(head).all(|(tree, word)| spelled(tree, word))
            && matches!(&window[head.len()], TokenTree::Group(group) if group.delimiter() == delimiter)
    };
    let mut windows = trees.windows(head.len() + 1);
    let at = if last { windows.rposition(found) } else { windows.position(found) };
    at.map(|at| at + head.len())
}

/// A word of [`group_after`]'s head that any identifier spells.
pub(super) const ANY: &str = "";

/// Whether `tree` is the identifier, or the one punctuation character, `word` (any identifier
/// for [`ANY`]).
fn spelled(tree: &TokenTree, word: &str) -> bool {
    match tree {
        TokenTree::Ident(_) if word == ANY => true,
        TokenTree::Ident(ident) => ident == word,
        TokenTree::Punct(punct) => word.len() == 1 && word.starts_with(punct.as_char()),
        _ => false,
    }
}

/// `item` printed as a file of its own.
fn print_alone(item: syn::Item) -> String {
    let mut file: syn::File = syn::parse_quote! {};
    file.items.push(item);
    crate::write::print(file)
}

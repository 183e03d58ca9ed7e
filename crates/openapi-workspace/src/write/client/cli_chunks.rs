//! progenitor's CLI, cut for `cli.rs`: its `impl<T: CliConfig> Cli<T>` a member at a time as
//! text, the rest as tokens. On the largest documents it is run a chunk of operations at a time
//! (`chunks::each_chunk`), as the client is, and the chunks joined as one run writes them: each
//! operation's `cli_` and `execute_` functions, `get_command`'s and `execute`'s arms, its
//! `CliConfig` hook, its `CliCommand` variant and that enum's `iter` and `operation_id` entries,
//! in operation order.

use std::collections::BTreeSet;

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use progenitor::{Generator, TypeImpl};

use super::by_member::{ANY, Container, group_after};
use super::chunks::{after_attributes, each_chunk, function_name, text};
use super::view::View;
use super::{progenitor, settings};
use crate::error::{Error, Result};

/// The CLI as `cli.rs` reads it.
pub(super) struct Output {
    /// Everything but the members of `Cli`'s impl, which is left empty.
    pub rest: TokenStream,
    /// That impl's members, as text.
    pub members: Vec<String>,
    /// The models clap reads from text (typify gives them `FromStr`: enums, constrained strings).
    pub parsed: BTreeSet<String>,
}

/// progenitor's CLI of `view`, whole or (with more than `operations` operations) in chunks.
pub(super) fn run(
    view: &mut View,
    client_crate: &str,
    container: &Container<syn::ItemImpl>,
    operations: usize,
) -> Result<Output> {
    let mut joined = Joined::default();
    if view.openapi.operations().count() <= operations {
        joined.add(view, client_crate, container)?;
    } else {
        each_chunk(view, operations, |view| joined.add(view, client_crate, container))?;
    }
    joined.output()
}

/// The chunks run so far.
#[derive(Default)]
struct Joined {
    /// The first chunk's CLI but `Cli`'s members.
    rest: Option<Vec<TokenTree>>,
    /// The first chunk's `new`, `get_command` and `execute`, as tokens.
    new: Vec<TokenTree>,
    get_command: Vec<TokenTree>,
    execute: Vec<TokenTree>,
    /// Every chunk's arms of `get_command` and `execute`.
    get_command_arms: TokenStream,
    execute_arms: TokenStream,
    /// Every chunk's `cli_` and `execute_` functions, as text.
    cli_functions: Vec<String>,
    execute_functions: Vec<String>,
    /// The later chunks' `CliConfig` hooks, `CliCommand` variants, its `iter` entries and its
    /// `operation_id` arms.
    hooks: TokenStream,
    variants: TokenStream,
    entries: TokenStream,
    operation_ids: TokenStream,
    parsed: BTreeSet<String>,
}

impl Joined {
    fn add(&mut self, view: &View, client_crate: &str, container: &Container<syn::ItemImpl>) -> Result<()> {
        let mut generator = Generator::new(&settings(view));
        let cli = crate::timings::timed("write/cli progenitor", || {
            progenitor("a CLI", || generator.cli(&view.openapi, client_crate))
        })?;
        let parsed = generator.get_type_space().iter_types().filter(|model| model.has_impl(TypeImpl::FromStr));
        self.parsed.extend(parsed.map(|model| model.name()));
        drop(generator);
        let (rest, members) = container.take_body(cli);
        for member in crate::write::pieces(members) {
            let name = function_name(&member).unwrap_or_default();
            match name.as_str() {
                "new" => {
                    if self.new.is_empty() {
                        self.new = member;
                    }
                }
                "get_command" => {
                    self.get_command_arms.extend(inner(&member, &match_arms)?);
                    if self.get_command.is_empty() {
                        self.get_command = member;
                    }
                }
                "execute" => {
                    self.execute_arms.extend(inner(&member, &match_arms)?);
                    if self.execute.is_empty() {
                        self.execute = member;
                    }
                }
                _ if name.starts_with("cli_") => self.cli_functions.push(text(member)),
                _ if name.starts_with("execute_") => self.execute_functions.push(text(member)),
                // Nothing is dropped unseen: progenitor's `Cli` has no other member.
                _ => return Err(Error::Document(format!("progenitor's CLI has a member not known: {}", text(member)))),
            }
        }
        let rest: Vec<TokenTree> = rest.into_iter().collect();
        if self.rest.is_none() {
            self.rest = Some(rest);
            return Ok(());
        }
        for piece in crate::write::pieces(rest) {
            match after_attributes(&piece) {
                [TokenTree::Ident(kind), TokenTree::Ident(name), TokenTree::Group(body)]
                    if kind == "trait" && name == "CliConfig" =>
                {
                    let hooks = crate::write::pieces(body.stream().into_iter().collect())
                        .filter(|hook| function_name(hook).is_some_and(|name| name.starts_with("execute_")));
                    self.hooks.extend(hooks.flatten());
                }
                [TokenTree::Ident(kind), TokenTree::Ident(name), TokenTree::Group(body)]
                    if kind == "enum" && name == "CliCommand" =>
                {
                    self.variants.extend(body.stream())
                }
                [TokenTree::Ident(kind), TokenTree::Ident(name), TokenTree::Group(_)]
                    if kind == "impl" && name == "CliCommand" =>
                {
                    self.entries.extend(inner(&piece, &vec_entries)?);
                    self.operation_ids.extend(inner(&piece, &match_arms)?);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn output(self) -> Result<Output> {
        let mut rest = self.rest.unwrap_or_default();
        if !self.hooks.is_empty() {
            extend(&mut rest, &|trees| body_of(trees, "trait", "CliConfig"), self.hooks)?;
            extend(&mut rest, &|trees| body_of(trees, "enum", "CliCommand"), self.variants)?;
            let at = body_of(&rest, "impl", "CliCommand")
                .ok_or_else(|| Error::Document("progenitor's CLI has no `impl CliCommand`".into()))?;
            let mut body = vec![rest[at].clone()];
            extend(&mut body, &vec_entries, self.entries)?;
            extend(&mut body, &match_arms, self.operation_ids)?;
            rest[at] = body.remove(0);
        }
        let mut get_command = self.get_command;
        replace(&mut get_command, &match_arms, self.get_command_arms)?;
        let mut execute = self.execute;
        replace(&mut execute, &match_arms, self.execute_arms)?;
        let mut members = vec![text(self.new), text(get_command)];
        members.extend(self.cli_functions);
        members.push(text(execute));
        members.extend(self.execute_functions);
        members.retain(|member| !member.is_empty());
        Ok(Output { rest: rest.into_iter().collect(), members, parsed: self.parsed })
    }
}

/// Where a group `find` finds among `trees` is: its index.
type Find = dyn Fn(&[TokenTree]) -> Option<usize>;

/// `match x { … }`'s braces.
fn match_arms(trees: &[TokenTree]) -> Option<usize> {
    group_after(trees, &["match", ANY], Delimiter::Brace, false)
}

/// `vec![ … ]`'s brackets.
fn vec_entries(trees: &[TokenTree]) -> Option<usize> {
    group_after(trees, &["vec", "!"], Delimiter::Bracket, false)
}

/// `kind name { … }`'s braces (`trait CliConfig`, `enum CliCommand`).
fn body_of(trees: &[TokenTree], kind: &str, name: &str) -> Option<usize> {
    group_after(trees, &[kind, name], Delimiter::Brace, false)
}

/// The tokens inside the first group `find` finds in `trees` or in the groups within, depth first.
fn inner(trees: &[TokenTree], find: &Find) -> Result<TokenStream> {
    fn search(trees: &[TokenTree], find: &Find) -> Option<TokenStream> {
        if let Some(at) = find(trees)
            && let TokenTree::Group(group) = &trees[at]
        {
            return Some(group.stream());
        }
        trees.iter().find_map(|tree| match tree {
            TokenTree::Group(group) => search(&group.stream().into_iter().collect::<Vec<_>>(), find),
            _ => None,
        })
    }
    search(trees, find)
        .ok_or_else(|| Error::Document(format!("progenitor's CLI is not as expected: {}", text(trees.to_vec()))))
}

/// `trees` with `more` added at the end of the first group `find` finds (as [`inner`]).
fn extend(trees: &mut [TokenTree], find: &Find, more: TokenStream) -> Result<()> {
    edit(trees, find, &mut |group| {
        let mut stream = group.stream();
        stream.extend(more.clone());
        stream
    })
}

/// `trees` with the first group `find` finds (as [`inner`]) holding `only`.
fn replace(trees: &mut [TokenTree], find: &Find, only: TokenStream) -> Result<()> {
    edit(trees, find, &mut |_| only.clone())
}

fn edit(trees: &mut [TokenTree], find: &Find, change: &mut dyn FnMut(&Group) -> TokenStream) -> Result<()> {
    fn walk(trees: &mut [TokenTree], find: &Find, change: &mut dyn FnMut(&Group) -> TokenStream) -> bool {
        if let Some(at) = find(trees)
            && let TokenTree::Group(group) = &trees[at]
        {
            trees[at] = Group::new(group.delimiter(), change(group)).into();
            return true;
        }
        for tree in trees.iter_mut() {
            if let TokenTree::Group(group) = tree {
                let mut inside: Vec<TokenTree> = group.stream().into_iter().collect();
                if walk(&mut inside, find, change) {
                    *tree = Group::new(group.delimiter(), inside.into_iter().collect()).into();
                    return true;
                }
            }
        }
        false
    }
    match walk(trees, find, change) {
        true => Ok(()),
        false => Err(Error::Document(format!("progenitor's CLI is not as expected: {}", text(trees.to_vec())))),
    }
}

#[cfg(test)]
mod tests {
    use crate::read::Spec;
    use crate::write::Config;

    #[test]
    fn the_payments_cli_in_chunks_of_five_operations_is_written_as_whole() {
        let spec = Spec::parse(include_str!("../../../../../openapi/payments.yaml")).unwrap();
        let config = Config::sibling_modules("test");
        let builders = super::super::generate(&spec, &config).unwrap().builders;
        let cli = |operations| super::super::cli::in_chunks(&spec, "client", &builders, &config, operations).unwrap();
        let (whole, chunked) = (cli(usize::MAX), cli(5));
        assert!(whole == chunked, "the CLIs differ");
    }
}

//! The last stage: every file the generator writes, each writer reading the model (and the read
//! view) and nothing written after it — the types and the client (progenitor's, with our hooks),
//! the server, the samples, the documentation, and a standalone workspace around them.

pub(crate) mod client;
pub(crate) mod doc_lines;
pub(crate) mod docs;
pub(crate) mod leave_out;
pub(crate) mod memory;
pub(crate) mod mock_plan;
pub(crate) mod samples;
pub(crate) mod server;
pub(crate) mod wire;
pub(crate) mod workspace;

use crate::error::{Error, Result};
use crate::read::{Note, Spec};

/// Where the generated code finds its neighbours. The real crates and the snapshot samples
/// differ only here.
#[derive(Debug, Clone)]
pub struct Config {
    /// Rust path of the generated models, as seen from the client and server code
    /// (`payments_types` for the real crates).
    pub types_path: String,
    /// Rust path of the hand-written server runtime, as seen from the server code.
    pub server_runtime_path: String,
    /// How the header names the document the code came from.
    pub source: String,
    /// How the header names what wrote the code: `cargo xtask codegen` in this repository,
    /// `openapi-workspace` in a workspace of its own.
    pub generator: String,
    /// Whether the client's operations, and the models they reach, are behind a cargo feature
    /// per group of operations (`model::groups`): for workspaces whose manifests the generator
    /// writes, when the document has more than one group.
    pub features: bool,
}

impl Config {
    /// For this workspace's crates: client and server use the `payments-types` crate, and the
    /// server's hand-written runtime is its own `runtime` module.
    pub fn workspace(source: &str) -> Self {
        Self {
            types_path: "payments_types".into(),
            server_runtime_path: "crate::runtime".into(),
            source: source.into(),
            generator: XTASK.into(),
            features: false,
        }
    }

    /// For a self-contained module tree where `types`, `client` and `server` are sibling modules
    /// (the snapshot samples): the server's runtime is the `openapi-workspace-runtime` crate.
    pub fn sibling_modules(source: &str) -> Self {
        Self {
            types_path: "super::types".into(),
            server_runtime_path: "openapi_workspace_runtime".into(),
            source: source.into(),
            generator: XTASK.into(),
            features: false,
        }
    }
}

/// The generated files' contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub types: String,
    pub client: String,
    pub server: String,
    /// The document's schemas as JSON Schema (2020-12), which the server validates requests
    /// against; `server` includes it as `schemas.json`.
    pub server_schemas: String,
    /// Crates the client's code uses beyond progenitor's runtime (see `client::Models::uses`).
    pub client_uses: Vec<&'static str>,
    /// What reading the document left out or approximated, with its JSON pointer.
    pub notes: Vec<Note>,
    /// The cargo features of the client and types crates, one per group of operations (and the
    /// models no operation reaches); empty without `Config::features`.
    pub features: Vec<String>,
    /// The types crate's features of sets of groups, each turned on by the groups of its set.
    pub shared_features: client::features::Shared,
    /// What the samples need of the client: its operations' builders.
    pub builders: samples::Builders,
    /// The operations with page and item streams (`client::pagination`), and the parameter each
    /// is paged by.
    pub paginated: Vec<(String, String)>,
}

pub(crate) fn generate(spec: &Spec, config: &Config) -> Result<Generated> {
    // The models and the client come printed, before the server is written: their syntax trees
    // are the largest thing held on the largest documents, and the server needs only the names.
    let mut models = crate::timings::timed("write/client", || client::generate(spec, config))?;
    // progenitor's usage examples are `ignore` doctests; as `text` they read the same and
    // don't show up as ignored tests in every run.
    let client = client::methods::client_docs(
        spec,
        &format!("{}{}", header(config), models.client).replace("```ignore", "```text"),
    );
    memory::release();
    let (error_object, error_note) = crate::model::error_object::find(&spec.raw);
    // What axum's router cannot route the client calls and the server leaves out, noted; a path
    // that is another's but for its parameters' names is served at that one's route.
    let (served, unserved) = crate::model::operation::routed(std::mem::take(&mut models.ops));
    let unserved = unserved.into_iter().map(|(pointer, why)| Note {
        pointer,
        message: format!("not served by the generated server (the client calls it): {why}"),
    });
    // The server printed as it is written, a few items at a time (`server::generate`).
    let mut printed = header(config);
    crate::timings::timed("write/server", || {
        let mut print = |tokens: proc_macro2::TokenStream| {
            each_item(tokens.into_iter().collect(), |item| printed.push_str(&print_item(item)))
                .map_err(|e| Error::unparsable("generated code", e))
        };
        server::generate(spec, &served, config, server::Surface::Api, &error_object, &mut print)?;
        let Some(webhooks) = spec.webhooks() else { return Ok(()) };
        // One module deeper: a path relative to the server's module gains a `super`.
        let types_path = match config.types_path.strip_prefix("super::") {
            Some(_) => format!("super::{}", config.types_path),
            None => config.types_path.clone(),
        };
        let mut receiver = proc_macro2::TokenStream::new();
        server::generate(
            webhooks,
            &server::operations(webhooks, &models.type_names, &error_object)?,
            &Config { types_path, ..config.clone() },
            server::Surface::Receiver,
            &error_object,
            &mut |tokens| {
                receiver.extend(tokens);
                Ok(())
            },
        )?;
        print(quote::quote! {
            /// The receiver of the document's webhooks: [`receiver::Api`] and [`receiver::router`].
            pub mod receiver {
                #receiver
            }
        })
    })?;
    Ok(Generated {
        types: models.types,
        client,
        server: printed,
        server_schemas: crate::timings::timed("write/schemas", || crate::model::json_schema::schema_document(spec))?,
        client_uses: models.uses,
        notes: spec.notes.iter().cloned().chain(models.notes).chain(error_note).chain(unserved).collect(),
        features: models.features,
        shared_features: models.shared_features,
        builders: models.builders,
        paginated: models.paginated,
    })
}

/// `tokens` parsed as a file a top-level item at a time: `syn::parse2` of the whole first
/// copies every token into its own buffer, which at the largest documents' size is the peak of
/// the generator's memory. An item ends at a `;` or a braced group (and a `;` right after it);
/// a piece that does not parse alone (`A { .. }.f()` in a `const`) is joined to the next.
pub(crate) fn parse_file(tokens: proc_macro2::TokenStream) -> syn::Result<syn::File> {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    if inner_attributes(&trees) {
        return syn::parse2(trees.into_iter().collect());
    }
    let mut items = Vec::new();
    each_item(trees, |item| items.push(item))?;
    let mut file: syn::File = syn::parse2(proc_macro2::TokenStream::new())?;
    file.items = items;
    Ok(file)
}

/// Whether `trees` start with an inner attribute (`#![…]`), which belongs to the file, not to an
/// item: such a file is parsed whole.
fn inner_attributes(trees: &[proc_macro2::TokenTree]) -> bool {
    use proc_macro2::TokenTree;
    matches!(trees.get(..2), Some([TokenTree::Punct(hash), TokenTree::Punct(bang)]) if hash.as_char() == '#' && bang.as_char() == '!')
}

/// Each item of `trees` (the body of a file or a module) parsed and handed to `each` in turn, as
/// [`parse_file`] cuts them: the tokens of one are freed once it is parsed.
pub(crate) fn each_item(trees: Vec<proc_macro2::TokenTree>, each: impl FnMut(syn::Item)) -> syn::Result<()> {
    each_parsed(trees, each)
}

/// [`each_item`] for any piece that ends as an item does: an item, or a member of an `impl`.
pub(crate) fn each_parsed<T: syn::parse::Parse>(
    trees: Vec<proc_macro2::TokenTree>,
    mut each: impl FnMut(T),
) -> syn::Result<()> {
    let mut pieces = pieces(trees).peekable();
    let mut piece: Vec<proc_macro2::TokenTree> = Vec::new();
    while let Some(next) = pieces.next() {
        piece.extend(next);
        match syn::parse2::<T>(piece.iter().cloned().collect()) {
            Ok(item) => {
                each(item);
                piece.clear();
            }
            Err(error) if pieces.peek().is_none() => return Err(error),
            Err(_) => {}
        }
    }
    Ok(())
}

/// The pieces of `trees` [`each_parsed`] would cut, each as its text, the tokens freed as they
/// are read: a token takes many times the memory of its text, and the client's builders, held
/// while the models and the rest of the client are parsed, were the largest thing held on the
/// largest documents. `read` sees each piece's tokens before they become text.
pub(crate) fn item_texts(
    trees: Vec<proc_macro2::TokenTree>,
    mut read: impl FnMut(&proc_macro2::TokenStream),
) -> Vec<String> {
    pieces(trees)
        .map(|piece| {
            let piece: proc_macro2::TokenStream = piece.into_iter().collect();
            read(&piece);
            piece.to_string()
        })
        .collect()
}

/// The body of a file or a module cut where an item may end: at a `;` or a braced group (and a
/// `;` right after it), and at the end. A piece that does not parse alone (`A { .. }.f()` in a
/// `const`) is joined to the next by whoever parses them.
pub(crate) fn pieces(trees: Vec<proc_macro2::TokenTree>) -> Pieces {
    Pieces(trees.into_iter().peekable())
}

/// See [`pieces`].
pub(crate) struct Pieces(std::iter::Peekable<std::vec::IntoIter<proc_macro2::TokenTree>>);

impl Iterator for Pieces {
    type Item = Vec<proc_macro2::TokenTree>;

    fn next(&mut self) -> Option<Self::Item> {
        use proc_macro2::{Delimiter, TokenTree};
        let mut piece = Vec::new();
        while let Some(tree) = self.0.next() {
            let ends = match &tree {
                TokenTree::Group(group) => group.delimiter() == Delimiter::Brace,
                TokenTree::Punct(punct) => punct.as_char() == ';',
                _ => false,
            };
            piece.push(tree);
            if ends {
                if let Some(TokenTree::Punct(punct)) = self.0.peek()
                    && punct.as_char() == ';'
                {
                    piece.extend(self.0.next());
                }
                return Some(piece);
            }
        }
        (!piece.is_empty()).then_some(piece)
    }
}

/// Each of `texts` ([`item_texts`]) parsed and handed to `each` in turn, as [`each_parsed`]
/// parses tokens: a piece that does not parse alone is joined to the next.
pub(crate) fn each_text_item(texts: Vec<String>, each: impl FnMut(syn::Item)) -> syn::Result<()> {
    each_text_parsed(texts, each)
}

/// [`each_text_item`] for any piece that ends as an item does: an item, or a member of an `impl`.
pub(crate) fn each_text_parsed<T: syn::parse::Parse>(texts: Vec<String>, mut each: impl FnMut(T)) -> syn::Result<()> {
    let mut piece = String::new();
    let count = texts.len();
    for (at, text) in texts.into_iter().enumerate() {
        if piece.is_empty() {
            piece = text;
        } else {
            piece.push(' ');
            piece.push_str(&text);
        }
        match syn::parse_str::<T>(&piece) {
            Ok(item) => {
                each(item);
                piece.clear();
            }
            Err(error) if at + 1 == count => return Err(error),
            Err(_) => {}
        }
    }
    Ok(())
}

/// What wrote our own crates (and the snapshot samples).
const XTASK: &str = "`cargo xtask codegen`";

/// The header every generated Rust file starts with: a standalone workspace has an `xtask` of its
/// own, so `cargo xtask codegen` regenerates either.
pub fn header(config: &Config) -> String {
    format!(
        "// @generated by {} from {}.\n// Do not edit by hand: change the document and run `cargo xtask codegen`.\n\n",
        config.generator, config.source
    )
}

/// Generated code already parsed, printed with its header.
pub(crate) fn format_syntax(config: &Config, file: syn::File) -> String {
    format!("{}{}", header(config), print(file))
}

/// Generated code printed, one `///` line per line of its doc comments. prettyplease prints a
/// file's items one after another, each ending its own line, so a file without inner attributes
/// is printed an item at a time, each item's tree freed once printed.
pub(crate) fn print(mut file: syn::File) -> String {
    if file.shebang.is_some() || file.frontmatter.is_some() || !file.attrs.is_empty() {
        doc_lines::split_doc_lines(&mut file);
        return prettyplease::unparse(&file);
    }
    file.items.into_iter().map(print_item).collect()
}

fn print_item(item: syn::Item) -> String {
    let mut file: syn::File = syn::parse_quote! {};
    file.items.push(item);
    doc_lines::split_doc_lines(&mut file);
    prettyplease::unparse(&file)
}

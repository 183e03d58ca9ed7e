//! progenitor over a large document a chunk of operations at a time. progenitor returns the
//! whole client and its models as one token stream, built while the whole of it is held — on the
//! largest documents that stream, not the type space, is most of the generator's memory. Run on
//! a chunk of operations at a time (each with every component), each chunk's output is cut
//! into text before the next runs, and the chunks are joined as a single run writes them:
//!
//! - the client's operations (its last `impl Client`) and its builder module's members, in
//!   operation order;
//! - the models: typify writes a model's items together, models in order of their names, and
//!   gives a name to the first schema that asks for it (a later one of the same name refers to
//!   that model). So a model is the first chunk's that writes it, and the models are written in
//!   order of their names; its builder (`mod builder`) likewise; the `defaults` functions once
//!   each (by name, in the order first written); the `error` module as the first chunk writes it.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

use super::View;
use crate::error::{Error, Result};

/// Documents with more operations than this are run a chunk of this many at a time: few enough
/// that each chunk's output is a small part of the largest documents', many enough that the
/// components' models, which each chunk makes again, take little of the time.
pub(super) const OPERATIONS: usize = 4000;

/// What progenitor wrote, cut for what comes after.
pub(super) struct Output {
    /// The client, its `types` module replaced by a re-export of the types crate and its
    /// builder module left empty.
    pub client: TokenStream,
    /// The builder module's members, as text (`crate::write::item_texts`).
    pub members: Vec<String>,
    /// The models (the `types` module's body).
    pub types: TokenStream,
    /// The models' builders the builder module's members name (`models::body_builders`).
    pub bodies: BTreeSet<String>,
    /// Every model's name.
    pub type_names: BTreeSet<String>,
    pub futures: bool,
    pub websockets: bool,
}

/// The view's operations in chunks of `operations` (whole path items), run one after another;
/// the view's paths are as they were after, whatever the outcome.
pub(super) fn run(
    view: &mut View,
    types_path: &str,
    builder: &super::by_member::Container<syn::ItemMod>,
    operations: usize,
) -> Result<Output> {
    let mut joined = Joined::default();
    each_chunk(view, operations, |view| joined.add(view, types_path, builder))?;
    crate::timings::timed("write/client join", || joined.output())
}

/// `run` on the view holding each chunk of `operations` operations (whole path items) in turn,
/// until one fails; the view's paths are as they were after, whatever the outcome.
pub(super) fn each_chunk(view: &mut View, operations: usize, mut run: impl FnMut(&View) -> Result<()>) -> Result<()> {
    let mut chunks: Vec<Vec<(String, openapiv3::ReferenceOr<openapiv3::PathItem>)>> = vec![Vec::new()];
    let mut count = 0;
    for (path, item) in std::mem::take(&mut view.openapi.paths.paths) {
        let these = item.as_item().map_or(0, |item| item.iter().count());
        if count > 0 && count + these > operations {
            chunks.push(Vec::new());
            count = 0;
        }
        count += these;
        chunks.last_mut().expect("one at least").push((path, item));
    }
    let mut outcome = Ok(());
    let mut restored = Vec::new();
    for chunk in chunks {
        view.openapi.paths.paths = chunk.into_iter().collect();
        if outcome.is_ok() {
            outcome = run(view);
        }
        restored.extend(std::mem::take(&mut view.openapi.paths.paths));
    }
    view.openapi.paths.paths = restored.into_iter().collect();
    outcome
}

/// The chunks run so far.
#[derive(Default)]
struct Joined {
    /// The first chunk's client (its builder module empty).
    client: Option<TokenStream>,
    /// The later chunks' operations: their `impl Client`s' members.
    methods: Vec<TokenTree>,
    members: Vec<String>,
    bodies: BTreeSet<String>,
    type_names: BTreeSet<String>,
    futures: bool,
    websockets: bool,
    /// The chunks run.
    chunks: usize,
    /// Each model's items by its name, as text, and the chunk that wrote them.
    models: BTreeMap<String, (usize, String)>,
    /// Each model's builder by its name, as text, and the chunk that wrote it.
    builders: BTreeMap<String, (usize, String)>,
    /// The `defaults` functions, as text, and their names.
    defaults: (Vec<String>, BTreeSet<String>),
    /// The first chunk's `error` module, and each module's tokens before its body, as text.
    error: String,
    heads: BTreeMap<String, String>,
}

impl Joined {
    fn add(
        &mut self,
        view: &View,
        types_path: &str,
        builder: &super::by_member::Container<syn::ItemMod>,
    ) -> Result<()> {
        let super::Cut { client, mut members, types, type_names, futures, websockets } =
            super::cut(view, types_path, builder)?;
        self.chunks += 1;
        let chunk = self.chunks;
        self.type_names.extend(type_names);
        self.futures |= futures;
        self.websockets |= websockets;
        if self.client.is_some() {
            // The module's `use`s, which the first chunk's members have.
            members = crate::write::pieces(members).filter(|piece| !uses(piece)).flatten().collect();
        }
        let bodies = &mut self.bodies;
        self.members
            .extend(crate::write::item_texts(members, |piece| bodies.extend(super::models::body_builders(piece))));
        match self.client {
            None => self.client = Some(client),
            Some(_) => {
                let mut trees: Vec<TokenTree> = client.into_iter().collect();
                let at = operations_impl(&trees)?;
                let TokenTree::Group(methods) = trees.swap_remove(at) else { unreachable!("found as a group") };
                self.methods.extend(methods.stream());
            }
        }
        let mut cursor = Cursor { chunk, ..Cursor::default() };
        for piece in crate::write::pieces(types.into_iter().collect()) {
            match module(&piece) {
                Some((name, head, body)) => {
                    self.heads.entry(name.clone()).or_insert(head);
                    match name.as_str() {
                        "builder" => by_model(body, &mut self.builders, chunk)?,
                        "defaults" => {
                            for function in crate::write::pieces(body.into_iter().collect()) {
                                let name = function_name(&function).unwrap_or_default();
                                if self.defaults.1.insert(name) {
                                    self.defaults.0.push(text(function));
                                }
                            }
                        }
                        _ if self.error.is_empty() => self.error = text(body.into_iter().collect()),
                        _ => {}
                    }
                }
                None => by_model_piece(piece, &mut self.models, &mut cursor)?,
            }
        }
        Ok(())
    }

    fn output(self) -> Result<Output> {
        let mut client: Vec<TokenTree> = self.client.unwrap_or_default().into_iter().collect();
        let at = operations_impl(&client)?;
        if let TokenTree::Group(first) = &client[at] {
            let mut methods = first.stream();
            methods.extend(self.methods);
            client[at] = Group::new(Delimiter::Brace, methods).into();
        }
        // Each model's text made tokens and freed in turn: the models joined in one text, beside
        // their tokens, were the peak of the largest documents' generation.
        let tokens = |texts: &mut dyn Iterator<Item = String>| -> Result<TokenStream> {
            let mut stream = TokenStream::new();
            for text in texts {
                let parsed: TokenStream = text
                    .parse()
                    .map_err(|e| Error::Document(format!("progenitor's models, joined, do not parse: {e}")))?;
                stream.extend(parsed);
            }
            Ok(stream)
        };
        let mut types = tokens(&mut self.models.into_values().map(|(_, text)| text))?;
        let modules = [
            ("builder", tokens(&mut self.builders.into_values().map(|(_, text)| text))?),
            ("defaults", tokens(&mut self.defaults.0.into_iter())?),
            ("error", tokens(&mut std::iter::once(self.error))?),
        ];
        for (name, body) in modules {
            if let Some(head) = self.heads.get(name) {
                types.extend(tokens(&mut std::iter::once(head.clone()))?);
                types.extend([TokenTree::Group(Group::new(Delimiter::Brace, body))]);
            }
        }
        Ok(Output {
            client: client.into_iter().collect(),
            members: self.members,
            types,
            bodies: self.bodies,
            type_names: self.type_names,
            futures: self.futures,
            websockets: self.websockets,
        })
    }
}

/// Where the client's operations are: its last `impl Client { … }`.
fn operations_impl(trees: &[TokenTree]) -> Result<usize> {
    super::by_member::group_after(trees, &["impl", "Client"], Delimiter::Brace, true)
        .ok_or_else(|| Error::Document("progenitor's client has no `impl Client` of operations".into()))
}

/// The model whose items are being read (a model's items follow its definition), in which chunk.
#[derive(Default)]
struct Cursor {
    chunk: usize,
    name: Option<String>,
    kept: bool,
}

/// Each model's items of `body` (a module's), by the model's name, into `models`.
fn by_model(body: TokenStream, models: &mut BTreeMap<String, (usize, String)>, chunk: usize) -> Result<()> {
    let mut cursor = Cursor { chunk, ..Cursor::default() };
    for piece in crate::write::pieces(body.into_iter().collect()) {
        by_model_piece(piece, models, &mut cursor)?;
    }
    Ok(())
}

/// One item: a definition starts its model's text or adds to it (unless an earlier chunk wrote
/// that model: a name can have several definitions, typify writing them all under it), anything
/// else goes with the definition before it.
fn by_model_piece(
    piece: Vec<TokenTree>,
    models: &mut BTreeMap<String, (usize, String)>,
    cursor: &mut Cursor,
) -> Result<()> {
    if let Some(name) = defines(&piece) {
        cursor.kept = models.get(&name).is_none_or(|(chunk, _)| *chunk == cursor.chunk);
        cursor.name = Some(name);
    }
    let Some(name) = &cursor.name else {
        return Err(Error::Document(format!("progenitor's models start with an item of no model: {}", text(piece))));
    };
    if cursor.kept {
        let (_, model) = models.entry(name.clone()).or_insert_with(|| (cursor.chunk, String::new()));
        if !model.is_empty() {
            model.push(' ');
        }
        model.push_str(&text(piece));
    }
    Ok(())
}

/// The tokens of `piece` after its attributes and visibility.
pub(super) fn after_attributes(piece: &[TokenTree]) -> &[TokenTree] {
    let mut rest = piece;
    loop {
        match rest {
            [TokenTree::Punct(hash), TokenTree::Group(group), tail @ ..]
                if hash.as_char() == '#' && group.delimiter() == Delimiter::Bracket =>
            {
                rest = tail
            }
            [TokenTree::Ident(public), TokenTree::Group(group), tail @ ..]
                if public == "pub" && group.delimiter() == Delimiter::Parenthesis =>
            {
                rest = tail
            }
            [TokenTree::Ident(public), tail @ ..] if public == "pub" => rest = tail,
            _ => return rest,
        }
    }
}

/// The name a model's definition gives (`struct X`, `enum X`, `type X`).
fn defines(piece: &[TokenTree]) -> Option<String> {
    match after_attributes(piece) {
        [TokenTree::Ident(kind), TokenTree::Ident(name), ..]
            if kind == "struct" || kind == "enum" || kind == "type" =>
        {
            Some(name.to_string())
        }
        _ => None,
    }
}

/// Whether `piece` is a `use` item.
fn uses(piece: &[TokenTree]) -> bool {
    matches!(after_attributes(piece), [TokenTree::Ident(keyword), ..] if keyword == "use")
}

/// A function's name (`fn x`, `async fn x`).
pub(super) fn function_name(piece: &[TokenTree]) -> Option<String> {
    match after_attributes(piece) {
        [TokenTree::Ident(kind), TokenTree::Ident(name), ..] if kind == "fn" => Some(name.to_string()),
        [TokenTree::Ident(asynchronous), TokenTree::Ident(kind), TokenTree::Ident(name), ..]
            if asynchronous == "async" && kind == "fn" =>
        {
            Some(name.to_string())
        }
        _ => None,
    }
}

/// A module (`mod x { … }`): its name, its tokens before the body as text, and the body.
fn module(piece: &[TokenTree]) -> Option<(String, String, TokenStream)> {
    let rest = after_attributes(piece);
    match rest {
        [TokenTree::Ident(kind), TokenTree::Ident(name), TokenTree::Group(body)]
            if kind == "mod" && body.delimiter() == Delimiter::Brace =>
        {
            let head = text(piece[..piece.len() - 1].to_vec());
            Some((name.to_string(), head, body.stream()))
        }
        _ => None,
    }
}

pub(super) fn text(trees: Vec<TokenTree>) -> String {
    trees.into_iter().collect::<TokenStream>().to_string()
}

#[cfg(test)]
mod tests {
    use crate::read::Spec;
    use crate::write::Config;

    /// Whole and in chunks of `chunk` operations, `document` gives the same models and client.
    fn same_in_chunks(document: &str, chunk: usize) {
        let spec = Spec::parse(document).unwrap();
        let config = Config::sibling_modules("test");
        let whole = super::super::in_chunks(&spec, &config, usize::MAX).unwrap();
        let chunked = super::super::in_chunks(&spec, &config, chunk).unwrap();
        assert!(whole.types == chunked.types, "the models differ");
        assert!(whole.client == chunked.client, "the clients differ");
        assert_eq!(whole.type_names, chunked.type_names);
        assert_eq!(whole.uses, chunked.uses);
    }

    #[test]
    fn the_payments_document_in_chunks_of_five_operations_is_written_as_whole() {
        same_in_chunks(include_str!("../../../../../openapi/payments.yaml"), 5);
    }

    #[test]
    fn a_name_two_chunks_give_is_the_first_chunks_model() {
        // Both inline bodies ask for the name `Shared`; typify gives it to the first, and the
        // second operation's body is that model, whole or in chunks.
        let inline = |property: &str| {
            format!(
                "{{content: {{application/json: {{schema: {{title: Shared, type: object, properties: {{{property}: {{type: string, default: x}}}}}}}}}}}}"
            )
        };
        let document = format!(
            "openapi: 3.0.3\ninfo: {{title: t, version: '1'}}\npaths:\n  /a:\n    post:\n      operationId: a\n      requestBody: {}\n      responses: {{'204': {{description: none}}}}\n  /b:\n    post:\n      operationId: b\n      requestBody: {}\n      responses: {{'200': {{description: ok, content: {{application/json: {{schema: {{type: array, items: {{$ref: '#/components/schemas/Item'}}}}}}}}}}}}\ncomponents:\n  schemas:\n    Item: {{type: object, properties: {{n: {{type: integer, default: 3}}}}}}\n",
            inline("first"),
            inline("second")
        );
        same_in_chunks(&document, 1);
    }
}

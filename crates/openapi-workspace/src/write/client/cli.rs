//! progenitor's clap CLI for the client, less what progenitor declares and does not implement,
//! and with what it leaves out filled in: arguments clap cannot read from text, bodies of bytes
//! sent and answered.

use std::collections::BTreeSet;

use syn::visit_mut::VisitMut;

use super::view::View;
use super::{by_member, cli_chunks};
use crate::error::{Error, Result};
use crate::read::Spec;
use crate::write::Config;
use crate::write::samples::Builders;

/// progenitor's clap CLI for the client crate `client_crate`: a `Cli` that turns each operation
/// into a `clap::Command` and runs it, reporting through a `CliConfig` the binary implements.
/// The view is the client's: what typify cannot type is retyped as the client's generation
/// retypes it (`super::retyped`), so the CLI names the models the client has. `builders`: the
/// client's, which say which operations take a body of bytes.
pub(crate) fn cli(spec: &Spec, client_crate: &str, builders: &Builders, config: &Config) -> Result<String> {
    in_chunks(spec, client_crate, builders, config, super::chunks::OPERATIONS)
}

/// [`cli`], progenitor run `operations` operations at a time on a document with more.
pub(super) fn in_chunks(
    spec: &Spec,
    client_crate: &str,
    builders: &Builders,
    config: &Config,
    operations: usize,
) -> Result<String> {
    let mut view = crate::timings::timed("write/cli view", || View::of(spec))?;
    // `Cli`'s impl (two functions per operation) is most of the CLI: it is read a member at a
    // time (`by_member`), each member completed, printed and dropped before the next is parsed;
    // the rest is parsed whole.
    let container = by_member::Container::<syn::ItemImpl>::new(syn::parse_quote!(
        impl<T: CliConfig> Cli<T> {}
    ));
    let output = match cli_chunks::run(&mut view, client_crate, &container, operations) {
        Ok(done) => done,
        Err(error) => match super::retyped(&mut view)? {
            Some(notes) if !notes.is_empty() => cli_chunks::run(&mut view, client_crate, &container, operations)?,
            _ => return Err(error),
        },
    };
    drop(view);
    let cli_chunks::Output { rest, members, parsed } = output;
    let mut file = crate::timings::timed("write/cli parse", || crate::write::parse_file(rest))
        .map_err(|e| Error::unparsable("progenitor's CLI", e))?;
    let bytes_in = bodies_of_bytes(&file, builders);
    let empty = &builders.empty_variants;
    let mut completed = Completed { parsed, bytes_in, empty, helpers: BTreeSet::new() };
    completed.visit_file_mut(&mut file);
    // The members are completed and printed on two threads, a half each, in order: printing is
    // most of the CLI's time on the largest documents. Each member is a function and parses
    // alone; syn's trees cannot cross threads, so each thread parses its own text.
    let print = |members: Vec<String>| -> syn::Result<(String, BTreeSet<&'static str>)> {
        let container = by_member::Container::<syn::ItemImpl>::new(syn::parse_quote!(
            impl<T: CliConfig> Cli<T> {}
        ));
        let (parsed, bytes_in) = (completed.parsed.clone(), completed.bytes_in.clone());
        let mut completed = Completed { parsed, bytes_in, empty, helpers: BTreeSet::new() };
        let mut printed = String::new();
        crate::write::each_text_parsed(members, |mut member: syn::ImplItem| {
            completed.visit_impl_item_mut(&mut member);
            printed.push_str(&container.printed(member));
        })?;
        Ok((printed, completed.helpers))
    };
    let ((mut printed, helpers), (second_half, more_helpers)) = crate::timings::timed("write/cli members", || {
        let mut first = members;
        let second = first.split_off(first.len() / 2);
        std::thread::scope(|scope| {
            let second = scope.spawn(|| print(second));
            let first = print(first)?;
            let second = second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            Ok::<_, syn::Error>((first, second))
        })
    })
    .map_err(|e| Error::unparsable("progenitor's CLI", e))?;
    printed.push_str(&second_half);
    completed.helpers.extend(helpers.into_iter().chain(more_helpers));
    for helper in &completed.helpers {
        let helper: syn::File = syn::parse_str(helper).map_err(|e| Error::unparsable("the CLI's helpers", e))?;
        file.items.extend(helper.items);
    }
    container
        .put_back(crate::write::format_syntax(config, file), &printed)
        .ok_or_else(|| Error::Document("the printed CLI lost its `Cli` impl".into()))
}

/// The operations (`execute_{op}`'s `op`) whose request body is bytes: progenitor's CLI gives
/// them no way to send it. Read from `CliConfig`'s hooks, which name each operation's builder.
fn bodies_of_bytes(file: &syn::File, builders: &Builders) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for item in &file.items {
        let syn::Item::Trait(config) = item else { continue };
        for member in &config.items {
            let syn::TraitItem::Fn(hook) = member else { continue };
            let Some(op) = hook.sig.ident.to_string().strip_prefix("execute_").map(str::to_owned) else { continue };
            let builder = hook.sig.inputs.iter().find_map(|input| match input {
                syn::FnArg::Typed(typed) => match &*typed.ty {
                    syn::Type::Reference(reference) if reference.mutability.is_some() => match &*reference.elem {
                        syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
                        _ => None,
                    },
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            });
            let takes_bytes = builder
                .and_then(|builder| builders.fields.get(&builder))
                .is_some_and(|fields| fields.get("body").is_some_and(|ty| ty == "reqwest::Body"));
            if takes_bytes {
                found.insert(op);
            }
        }
    }
    found
}

/// What the CLI is given beyond progenitor's output.
struct Completed<'a> {
    /// The models clap can read from text, by name.
    parsed: BTreeSet<String>,
    /// The operations whose body is bytes (`bodies_of_bytes`).
    bytes_in: BTreeSet<String>,
    /// The helper functions the rewritten code calls, added once each.
    helpers: BTreeSet<&'static str>,
    /// The enums whose `""` variant the models call `Empty` (typify, and so the CLI: `X`).
    empty: &'a BTreeSet<String>,
}

impl Completed<'_> {
    /// Whether clap reads `ty` from text: a scalar of the standard library or of the crates the
    /// models use, or a model typify gives `FromStr`. An array or an object is read as JSON.
    fn parsed_by_clap(&self, ty: &syn::Type) -> bool {
        const SCALARS: [&str; 28] = [
            "String",
            "bool",
            "char",
            "i8",
            "i16",
            "i32",
            "i64",
            "i128",
            "isize",
            "u8",
            "u16",
            "u32",
            "u64",
            "u128",
            "usize",
            "f32",
            "f64",
            "NonZeroU8",
            "NonZeroU16",
            "NonZeroU32",
            "NonZeroU64",
            "NonZeroI64",
            "Uuid",
            "DateTime",
            "NaiveDate",
            "NaiveTime",
            "Value",
            "PathBuf",
        ];
        let syn::Type::Path(path) = ty else { return false };
        let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
        match segments.as_slice() {
            [types, name] if types == "types" => self.parsed.contains(name),
            [.., last] => {
                SCALARS.contains(&last.as_str()) && (last != "Value" || segments.contains(&"serde_json".into()))
            }
            [] => false,
        }
    }
}

impl VisitMut for Completed<'_> {
    /// `types::T::X` for the `""` of an enum the models renamed is `types::T::Empty`.
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        let count = path.segments.len();
        if count >= 2
            && path.segments[count - 1].ident == "X"
            && self.empty.contains(&path.segments[count - 2].ident.to_string())
        {
            path.segments[count - 1].ident = quote::format_ident!("Empty");
        }
        syn::visit_mut::visit_path_mut(self, path);
    }

    /// A parameter carried by the runtime's `Keyed` (a style progenitor cannot write) is read as
    /// its model: the builder's setter takes the model itself.
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        syn::visit_mut::visit_type_mut(self, ty);
        if let syn::Type::Path(path) = ty
            && let Some(last) = path.path.segments.last()
            && last.ident == "Keyed"
            && let syn::PathArguments::AngleBracketed(arguments) = &last.arguments
            && let Some(syn::GenericArgument::Type(model)) = arguments.args.first()
        {
            *ty = model.clone();
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        match expr {
            // progenitor 0.15 gives every operation with a body a `--json-body-template` flag
            // whose help is its placeholder `XXX` and which nothing reads: a flag that does
            // nothing is worse than none (`--json-body` is how a whole body is given).
            syn::Expr::MethodCall(call)
                if call.method == "arg" && first_argument(call).contains("\"json-body-template\"") =>
            {
                *expr = (*call.receiver).clone();
            }
            // An argument read as JSON says so in its usage line (`--ids <JSON>`).
            syn::Expr::MethodCall(call)
                if call.method == "value_parser" && first_argument(call).starts_with("json_or_text") =>
            {
                *expr = syn::parse_quote!(#call.value_name("JSON"));
            }
            // `value_parser!(T)` does not compile for a `T` clap cannot read from text.
            syn::Expr::Macro(call) if call.mac.path.segments.last().is_some_and(|s| s.ident == "value_parser") => {
                let Ok(mut ty) = syn::parse2::<syn::Type>(call.mac.tokens.clone()) else { return };
                self.visit_type_mut(&mut ty);
                if self.parsed_by_clap(&ty) {
                    call.mac.tokens = quote::quote!(#ty);
                } else {
                    self.helpers.insert(JSON_OR_TEXT);
                    *expr = syn::parse_quote!(json_or_text::<#ty>);
                }
            }
            _ => {}
        }
    }

    /// progenitor answers a success of bytes (or an upgraded connection) with `todo!()`.
    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        syn::visit_mut::visit_arm_mut(self, arm);
        let unwritten = match &*arm.body {
            syn::Expr::Macro(call) => call.mac.path.is_ident("todo"),
            syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Macro(call)] => call.mac.path.is_ident("todo"),
                [syn::Stmt::Expr(syn::Expr::Macro(call), _)] => call.mac.path.is_ident("todo"),
                _ => false,
            },
            _ => false,
        };
        let success = matches!(&arm.pat, syn::Pat::TupleStruct(ok) if ok.path.is_ident("Ok"));
        if unwritten && success {
            self.helpers.insert(WRITE_BYTES);
            *arm.body = syn::parse_quote!(Unstructured::write(r).await);
        }
    }

    /// An operation whose body is bytes gets `--body-file FILE` (`-` for standard input).
    fn visit_impl_item_fn_mut(&mut self, function: &mut syn::ImplItemFn) {
        syn::visit_mut::visit_impl_item_fn_mut(self, function);
        let name = function.sig.ident.to_string();
        if let Some(op) = name.strip_prefix("cli_")
            && self.bytes_in.contains(op)
            && let Some(syn::Stmt::Expr(command, None)) = function.block.stmts.last_mut()
        {
            *command = syn::parse_quote! {
                #command.arg(
                    ::clap::Arg::new("body-file")
                        .long("body-file")
                        .value_name("FILE")
                        .required(true)
                        .value_parser(::clap::value_parser!(::std::path::PathBuf))
                        .help("The request body's bytes: a file, or - for standard input"),
                )
            };
        }
        if let Some(op) = name.strip_prefix("execute_")
            && self.bytes_in.contains(op)
            && let Some(at) = function.block.stmts.iter().position(|stmt| matches!(stmt, syn::Stmt::Local(_)))
        {
            self.helpers.insert(READ_BODY);
            function.block.stmts.insert(
                at + 1,
                syn::parse_quote! {
                    if let Some(path) = matches.get_one::<::std::path::PathBuf>("body-file") {
                        request = request.body(read_body(path)?);
                    }
                },
            );
        }
    }
}

/// The text of a method call's first argument (empty without one).
fn first_argument(call: &syn::ExprMethodCall) -> String {
    call.args.first().map(|arg| quote::quote!(#arg).to_string()).unwrap_or_default()
}

/// Reads an argument clap cannot read from text: its text as a JSON string first (a string
/// stays as typed), else its JSON (`--ids '[1,2]'`, `--filter '{"state":"open"}'`).
const JSON_OR_TEXT: &str = r#"
fn json_or_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).or_else(|as_text| {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(json) => serde_json::from_value(json).map_err(|e| e.to_string()),
            Err(_) => Err(as_text.to_string()),
        }
    })
}"#;

/// Reads a body of bytes from a file, or from standard input for `-`.
const READ_BODY: &str = r#"
fn read_body(path: &::std::path::Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut body = Vec::new();
    if path == ::std::path::Path::new("-") {
        std::io::stdin().read_to_end(&mut body).context("standard input")?;
    } else {
        body = std::fs::read(path).with_context(|| path.display().to_string())?;
    }
    Ok(body)
}"#;

/// An answer progenitor's CLI leaves `todo!()`: bytes, written to stdout as they arrive; a
/// connection upgraded (a WebSocket), which a command line cannot hold.
const WRITE_BYTES: &str = r#"
trait Unstructured {
    async fn write(self) -> anyhow::Result<()>;
}

impl Unstructured for ResponseValue<ByteStream> {
    async fn write(self) -> anyhow::Result<()> {
        use std::io::Write as _;
        let mut body = self.into_inner().into_inner();
        while let Some(chunk) = futures::StreamExt::next(&mut body).await {
            std::io::stdout().write_all(&chunk.context("the answer's body")?)?;
        }
        std::io::stdout().flush()?;
        Ok(())
    }
}

impl Unstructured for ResponseValue<reqwest::Upgraded> {
    async fn write(self) -> anyhow::Result<()> {
        anyhow::bail!("the server upgraded the connection (a WebSocket), which the command line cannot hold")
    }
}"#;

//! rustfmt over generated files, a large file in pieces. rustfmt's time on one item grows with
//! the square of its length or worse (a server trait of a thousand operations alone took it
//! seconds; its quarters, a tenth of that each), so a file is cut where rustfmt would format the
//! two sides apart anyway — between top-level items, and between the members of one large
//! trait, impl or module — each piece formatted by a process of its own (a process per core at
//! once), and the pieces joined. The result is what rustfmt makes of the whole file (`cargo fmt
//! --check` holds the committed crates to it; a test holds a file cut inside a trait to it).
//! The cuts read the layout prettyplease writes: an item's closing brace alone at its depth.

use std::path::Path;

use crate::error::{Error, Result};

/// The size above which a file, or a top-level item, is cut.
const PIECE_BYTES: usize = 128 << 10;

/// `source` formatted by rustfmt in `edition` with the configuration at `config`, so generated
/// files are what `cargo fmt` would make of them.
pub fn rustfmt(source: &str, edition: &str, config: &Path) -> Result<String> {
    in_pieces(source, edition, config, PIECE_BYTES)
}

/// What a piece of the file is: top-level items as they are, or some members of one item, to be
/// formatted inside its head (the lines up to its opening brace) and taken back out.
enum Piece<'a> {
    Items(String),
    Members { head: &'a str, members: String },
}

pub(super) fn in_pieces(source: &str, edition: &str, config: &Path, piece_bytes: usize) -> Result<String> {
    if source.len() <= piece_bytes {
        return one_process(source, edition, config);
    }
    let pieces = cut(source, piece_bytes);
    let formatted = parallel(&pieces, |piece| match piece {
        Piece::Items(text) => one_process(text, edition, config),
        Piece::Members { head, members } => one_process(&format!("{head}{members}}}\n"), edition, config),
    });
    // A cut the layout did not allow (a line that only looked like an item's end): the file whole.
    let Ok(formatted) = formatted else { return one_process(source, edition, config) };
    // A run of members is put back in its item: its first piece's head as rustfmt wrote it, then
    // each piece's members, then the closing brace.
    let mut joined = String::with_capacity(source.len());
    let mut open: Option<&str> = None;
    for (piece, text) in pieces.iter().zip(&formatted) {
        let Piece::Members { head, .. } = piece else {
            if open.take().is_some() {
                joined.push_str("}\n");
            }
            joined.push_str(text);
            continue;
        };
        let (formatted_head, body) = head_and_body(text);
        if open != Some(*head) {
            if open.is_some() {
                joined.push_str("}\n");
            }
            joined.push_str(formatted_head);
            open = Some(head);
        }
        joined.push_str(body);
    }
    if open.is_some() {
        joined.push_str("}\n");
    }
    Ok(joined)
}

/// A formatted item: its head (through the line that opens its body) and the lines of its body.
fn head_and_body(item: &str) -> (&str, &str) {
    let at = body_start(item).unwrap_or(item.len());
    let end = item.rfind("}\n").unwrap_or(item.len()).max(at);
    (&item[..at], &item[at..end])
}

/// Where an item's body starts: after its first line at the top level that opens it (not a
/// comment nor an attribute).
fn body_start(item: &str) -> Option<usize> {
    let mut at = 0;
    for line in item.split_inclusive('\n') {
        at += line.len();
        let line = line.trim_end();
        if !line.starts_with([' ', '/', '#']) && line.ends_with('{') {
            return Some(at);
        }
    }
    None
}

/// `source` cut into pieces of about `piece_bytes`: runs of whole top-level items, and an item
/// larger than that as runs of its members.
fn cut(source: &str, piece_bytes: usize) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut run = String::new();
    for item in ending_at(source, "}\n") {
        if item.len() > piece_bytes
            && let Some((head, members)) = split_head(item)
        {
            if !run.is_empty() {
                pieces.push(Piece::Items(std::mem::take(&mut run)));
            }
            let mut some = String::new();
            for member in ending_at(members, "    }\n").flat_map(|m| ending_at(m, "    };\n")) {
                some.push_str(member);
                if some.len() > piece_bytes {
                    pieces.push(Piece::Members { head, members: std::mem::take(&mut some) });
                }
            }
            if !some.is_empty() {
                pieces.push(Piece::Members { head, members: some });
            }
            continue;
        }
        run.push_str(item);
        if run.len() > piece_bytes {
            pieces.push(Piece::Items(std::mem::take(&mut run)));
        }
    }
    if !run.is_empty() {
        pieces.push(Piece::Items(run));
    }
    pieces
}

/// An item's head (through the line opening its body) and its members (without the closing
/// brace), when it has a body.
fn split_head(item: &str) -> Option<(&str, &str)> {
    let at = body_start(item)?;
    Some((&item[..at], item[at..].strip_suffix("}\n")?))
}

/// `text` in parts, each ending with a line equal to `line` (the last part with whatever is left).
fn ending_at<'a>(text: &'a str, line: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut at = 0;
        for part in rest.split_inclusive('\n') {
            at += part.len();
            if part == line {
                break;
            }
        }
        let (part, left) = rest.split_at(at);
        rest = left;
        Some(part)
    })
}

/// `work` done on each of `pieces`, a worker per core; the results in the pieces' order.
pub(super) fn parallel<T: Sync>(pieces: &[T], work: impl Fn(&T) -> Result<String> + Sync) -> Result<Vec<String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from).min(pieces.len().max(1));
    let mut done: Vec<(usize, Result<String>)> = std::thread::scope(|scope| {
        let worker = || {
            let mut done = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(piece) = pieces.get(index) else { return done };
                done.push((index, work(piece)));
            }
        };
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("a rustfmt worker")).collect()
    });
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, formatted)| formatted).collect()
}

/// `source` through one rustfmt process.
fn one_process(source: &str, edition: &str, config: &Path) -> Result<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()))
        .args(["--edition", edition, "--emit", "stdout", "--config-path"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::io("rustfmt (`rustup component add rustfmt`)", e))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = source.to_owned();
    // Written from another thread: rustfmt may fill its output pipe before reading all input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| Error::io("rustfmt", e))?;
    writer.join().expect("the writer thread").map_err(|e| Error::io("rustfmt", e))?;
    if !output.status.success() {
        return Err(Error::Rustfmt(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    String::from_utf8(output.stdout).map_err(|e| Error::library("rustfmt wrote other than UTF-8", e))
}

#[cfg(test)]
mod tests {
    /// A file of a large trait (cut between its members), a module and smaller items, formatted
    /// in small pieces: the same text as rustfmt makes of it whole.
    #[test]
    fn pieces_join_into_what_rustfmt_makes_of_the_whole() {
        let mut items = Vec::new();
        let methods: Vec<proc_macro2::TokenStream> = (0..300)
            .map(|i| {
                let name = quote::format_ident!("operation_{i}");
                quote::quote! {
                    #[doc = " An operation whose comment is long enough to be near the width rustfmt wraps at."]
                    fn #name(&self, context: Context<()>, query: Query) -> impl ::std::future::Future<Output = Result<Response, ApiError>> + Send {
                        let _ = (context, query);
                        async { Err(not_implemented("operation")) }
                    }
                }
            })
            .collect();
        items.push(quote::quote! { pub trait Api<P: Send + 'static = ()>: Send + Sync + 'static { #(#methods)* } });
        for i in 0..200 {
            let name = quote::format_ident!("Model{i}");
            items.push(quote::quote! {
                #[derive(Clone, Debug)]
                pub struct #name { pub a: ::std::option::Option<::std::string::String>, pub b: i64 }
                impl ::std::convert::From<&#name> for #name { fn from(value: &#name) -> Self { value.clone() } }
            });
        }
        items.push(
            quote::quote! { pub mod receiver { use super::*; pub trait Api { #(#methods)* } pub type X = i64; } },
        );
        let file: syn::File = syn::parse2(quote::quote!(#(#items)*)).expect("parses");
        let source = prettyplease::unparse(&file);
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let config = scratch.path().join("rustfmt.toml");
        std::fs::write(&config, super::super::files::RUSTFMT_TOML).expect("writes");
        let whole = super::one_process(&source, "2021", &config).expect("rustfmt");
        let cut = super::cut(&source, 8 << 10);
        assert!(cut.iter().filter(|p| matches!(p, super::Piece::Members { .. })).count() > 4, "cut inside the traits");
        let pieces = super::in_pieces(&source, "2021", &config, 8 << 10).expect("rustfmt in pieces");
        assert!(pieces == whole, "pieces differ from the whole:\n{}", first_difference(&pieces, &whole));
    }

    fn first_difference(a: &str, b: &str) -> String {
        let at = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(a.lines().count().min(b.lines().count()));
        format!("line {at}: {:?} / {:?}", a.lines().nth(at), b.lines().nth(at))
    }
}

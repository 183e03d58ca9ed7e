//! How the engine serves a plan ([`Options`]), and how a command line says so: the words
//! `openapi-workspace mock` takes, which a generated server's `cargo run -- …` takes too.

use std::sync::Arc;

use serde_json::Value;

use super::Keep;

/// How the engine serves a plan.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep the plan's resources: what a `POST` creates a `GET` finds (`state.rs`).
    pub stateful: bool,
    /// What a stateful mock starts with, and starts again with when reset.
    pub seed: Seed,
    /// Where a stateful mock's own operations are (`POST {control}/reset`); `None`: `/__mock`,
    /// which no document's path is likely to have.
    pub control: Option<String>,
    /// The one credential let in (a bearer token, an api key, a basic password); `None`: any of
    /// a kind the operation takes.
    pub credential: Option<String>,
    /// Where a stateful mock's items are kept beyond memory; `None`: in memory only.
    pub keep: Option<Arc<dyn Keep>>,
}

/// What a stateful mock starts with.
#[derive(Debug, Clone, Default)]
pub enum Seed {
    /// Each resource that is not nested under another, its read (or create) answer's example.
    #[default]
    Examples,
    Nothing,
    /// Items by collection path: `{"/owners": [{…}], "/owners/1/pets": [{…}]}`.
    Items(Value),
}

/// Why the options were refused: a seed file that names a collection the plan lacks, a
/// control prefix that is no path or one the document has.
#[derive(Debug)]
pub struct OptionsError(pub String);

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}

impl Seed {
    /// As a command line says it: `examples`, `none`, or a JSON file of items by collection path.
    pub fn read(said: &str) -> Result<Seed, OptionsError> {
        match said {
            "examples" => Ok(Seed::Examples),
            "none" => Ok(Seed::Nothing),
            file => std::fs::read_to_string(file)
                .map_err(|e| e.to_string())
                .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}")))
                .map(Seed::Items)
                .map_err(|why| OptionsError(format!("cannot read the seed {file}: {why}"))),
        }
    }
}

impl Options {
    /// The options of a generated server's `cargo run -- …` (`args` without the program's name),
    /// spelled as `openapi-workspace mock` spells them: `--stateful`, `--seed examples|none|FILE`,
    /// `--control-prefix PREFIX`, `--credential SECRET`. Its state is in memory: `openapi-workspace
    /// mock --database FILE` keeps one in a file.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Options, OptionsError> {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
                None => (arg, None),
            };
            let mut value =
                || inline.clone().or_else(|| args.next()).ok_or_else(|| OptionsError(format!("{flag} takes a value")));
            match flag.as_str() {
                "--stateful" => options.stateful = true,
                "--seed" => options.seed = Seed::read(&value()?)?,
                "--control-prefix" => options.control = Some(value()?),
                "--credential" => options.credential = Some(value()?),
                other => {
                    return Err(OptionsError(format!(
                        "unknown argument {other}: this mock takes --stateful, --seed examples|none|FILE, \
                         --control-prefix PREFIX and --credential SECRET"
                    )));
                }
            }
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::{Options, Seed};

    fn read(args: &[&str]) -> Result<Options, String> {
        Options::from_args(args.iter().map(|arg| (*arg).to_owned())).map_err(|e| e.0)
    }

    #[test]
    fn a_command_line_says_the_options_as_the_mock_command_spells_them() {
        let options =
            read(&["--stateful", "--seed", "none", "--credential=s3cret", "--control-prefix", "/_m"]).unwrap();
        assert!(options.stateful && matches!(options.seed, Seed::Nothing));
        assert_eq!((options.credential.as_deref(), options.control.as_deref()), (Some("s3cret"), Some("/_m")));
        let plain = read(&[]).unwrap();
        assert!(!plain.stateful && matches!(plain.seed, Seed::Examples) && plain.credential.is_none());
        assert!(read(&["--database", "x.db"]).unwrap_err().contains("unknown argument --database"));
        assert!(read(&["--credential"]).unwrap_err().contains("--credential takes a value"));
        assert!(read(&["--seed", "/no/such/seed.json"]).unwrap_err().contains("cannot read the seed"));
    }
}

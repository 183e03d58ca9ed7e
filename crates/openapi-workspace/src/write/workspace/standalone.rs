//! `openapi-workspace generate --spec FILE --out DIR`: the three crates for another document, as a
//! Cargo workspace of their own. The sources come from the same [`crate::generate`] as ours; what
//! is added here is what our workspace writes by hand: the manifests, each crate's `lib.rs`, the
//! servers' runtime as a crate of its own (`crates/openapi-workspace-runtime`, copied) and the
//! workspace's `xtask` (`xtask.rs`).

use crate::error::{Error, Result};
use crate::write::Config;
use crate::write::client::RUNTIME_CRATE;

/// One file of the workspace: its path under DIR and its contents. `rustfmt` files (the small
/// ones written from templates) are to be formatted before they are written. The generated code
/// (`generated.rs`) is written as prettyplease printed it from the syntax trees, and each crate's
/// `#[rustfmt::skip] mod generated;` keeps `cargo fmt` off it: rustfmt over a large document's
/// code takes longer than generating it, in the generator and in every `cargo fmt` after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub contents: String,
    pub rustfmt: bool,
}

/// The edition of the generated crates: 2021, the one progenitor's and typify's output is written
/// for (it may use `gen`, a keyword from 2024 on).
pub const STANDALONE_EDITION: &str = "2021";

/// The runtime (`crates/openapi-workspace-runtime`), written into the workspace as a
/// crate of its own: each file's name and text.
const RUNTIME_FILES: [(&str, &str); 39] = [
    ("lib.rs", include_str!("../../../../openapi-workspace-runtime/src/lib.rs")),
    ("wire.rs", include_str!("../../../../openapi-workspace-runtime/src/wire.rs")),
    ("forms.rs", include_str!("../../../../openapi-workspace-runtime/src/forms.rs")),
    ("client/form.rs", include_str!("../../../../openapi-workspace-runtime/src/client/form.rs")),
    ("client/errors.rs", include_str!("../../../../openapi-workspace-runtime/src/client/errors.rs")),
    ("client/events.rs", include_str!("../../../../openapi-workspace-runtime/src/client/events.rs")),
    ("client/items.rs", include_str!("../../../../openapi-workspace-runtime/src/client/items.rs")),
    ("client/mod.rs", include_str!("../../../../openapi-workspace-runtime/src/client/mod.rs")),
    ("client/multipart.rs", include_str!("../../../../openapi-workspace-runtime/src/client/multipart.rs")),
    ("client/options.rs", include_str!("../../../../openapi-workspace-runtime/src/client/options.rs")),
    ("client/pages.rs", include_str!("../../../../openapi-workspace-runtime/src/client/pages.rs")),
    ("client/retry.rs", include_str!("../../../../openapi-workspace-runtime/src/client/retry.rs")),
    ("client/retry_budget.rs", include_str!("../../../../openapi-workspace-runtime/src/client/retry_budget.rs")),
    ("client/tokens.rs", include_str!("../../../../openapi-workspace-runtime/src/client/tokens.rs")),
    ("client/styles.rs", include_str!("../../../../openapi-workspace-runtime/src/client/styles.rs")),
    ("server/bodies.rs", include_str!("../../../../openapi-workspace-runtime/src/server/bodies.rs")),
    ("server/context.rs", include_str!("../../../../openapi-workspace-runtime/src/server/context.rs")),
    ("server/credentials.rs", include_str!("../../../../openapi-workspace-runtime/src/server/credentials.rs")),
    ("server/error.rs", include_str!("../../../../openapi-workspace-runtime/src/server/error.rs")),
    ("server/error_object.rs", include_str!("../../../../openapi-workspace-runtime/src/server/error_object.rs")),
    ("server/events.rs", include_str!("../../../../openapi-workspace-runtime/src/server/events.rs")),
    ("server/finish.rs", include_str!("../../../../openapi-workspace-runtime/src/server/finish.rs")),
    ("server/items.rs", include_str!("../../../../openapi-workspace-runtime/src/server/items.rs")),
    ("server/json_tape.rs", include_str!("../../../../openapi-workspace-runtime/src/server/json_tape.rs")),
    ("server/json_writer.rs", include_str!("../../../../openapi-workspace-runtime/src/server/json_writer.rs")),
    ("server/mock/mod.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/mod.rs")),
    ("server/mock/options.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/options.rs")),
    ("server/mock/pages.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/pages.rs")),
    ("server/mock/patch.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/patch.rs")),
    ("server/mock/plan.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/plan.rs")),
    ("server/mock/state.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mock/state.rs")),
    ("server/mod.rs", include_str!("../../../../openapi-workspace-runtime/src/server/mod.rs")),
    ("server/multipart.rs", include_str!("../../../../openapi-workspace-runtime/src/server/multipart.rs")),
    ("server/params.rs", include_str!("../../../../openapi-workspace-runtime/src/server/params.rs")),
    ("server/path.rs", include_str!("../../../../openapi-workspace-runtime/src/server/path.rs")),
    ("server/prepared.rs", include_str!("../../../../openapi-workspace-runtime/src/server/prepared.rs")),
    ("server/responses.rs", include_str!("../../../../openapi-workspace-runtime/src/server/responses.rs")),
    ("server/schemas.rs", include_str!("../../../../openapi-workspace-runtime/src/server/schemas.rs")),
    ("server/styles.rs", include_str!("../../../../openapi-workspace-runtime/src/server/styles.rs")),
];

/// A workspace of its own for a document: its files, and what reading it left out.
#[derive(Debug, Clone)]
pub struct Standalone {
    pub files: Vec<File>,
    pub notes: Vec<crate::read::Note>,
    /// The operations with page and item streams, and the parameter each is paged by.
    pub paginated: Vec<(String, String)>,
}

/// The crates `<name>-types`, `<name>-client` and `<name>-server` generated from the document
/// `spec_text` (whose path, for the headers, is `source`); an operation no stage can serve is
/// left out, with a note (`leave_out`).
pub fn standalone(spec_text: &str, name: &str, source: &str) -> Result<Standalone> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if !valid {
        return Err(Error::Document(format!(
            "{name:?} cannot name crates: use lower-case letters, digits and dashes, starting with a letter"
        )));
    }
    let types_crate = format!("{name}-types");
    let types_path = types_crate.replace('-', "_");
    let config = Config {
        types_path: types_path.clone(),
        server_runtime_path: "crate::runtime".into(),
        source: source.into(),
        generator: "openapi-workspace".into(),
        features: true,
    };
    // Read once, for the crates and for the README's samples.
    let (spec, generated) = crate::write::leave_out::generate(spec_text, &config)?;
    let rust = |path: String, contents: String| File { path, contents, rustfmt: true };
    let text = |path: String, contents: String| File { path, contents, rustfmt: false };
    let header = crate::write::header(&config);
    // The mock engine's plan, for `cargo run -p NAME-server`; its schemas are `schemas.json`'s.
    let mock_plan = crate::write::mock_plan::plan(&spec).map_err(|error| spec.locate(error))?.0;
    let mock_plan = serde_json::to_string(&mock_plan).expect("a plan is JSON");
    let (mut notes, paginated) = (generated.notes.clone(), generated.paginated.clone());
    // The command line, from progenitor run again on the client's view: what it cannot write is
    // left out with a note, the rest of the workspace written.
    let client_crate = format!("{}_client", name.replace('-', "_"));
    // A document of webhooks alone has nothing to call: no command line.
    let callable = !generated.builders.fields.is_empty();
    let cli = callable.then(|| {
        crate::timings::timed("write/cli", || {
            crate::write::client::cli::cli(&spec, &client_crate, &generated.builders, &config)
                .map_err(|error| spec.locate(error))
        })
    });
    let cli = match cli {
        None => None,
        Some(Ok(cli)) => {
            let (what, dependencies) = super::cli_crate::manifest_parts(name);
            let manifest =
                (format!("{name}-cli/Cargo.toml"), crate_manifest(&format!("{name}-cli"), what, &dependencies), false);
            let sources = super::cli_crate::files(&spec, name, &header, cli, generated.builders.takes_credentials);
            Some(std::iter::once(manifest).chain(sources).collect::<Vec<_>>())
        }
        Some(Err(error)) => {
            let message = format!("the command line ({name}-cli) was left out: {error}");
            notes.push(crate::read::Note { pointer: String::new(), message });
            None
        }
    };
    let mut files = vec![
        text("Cargo.toml".into(), workspace_manifest(name, source, cli.is_some())),
        text(
            format!("{name}-types/Cargo.toml"),
            crate_manifest(
                &types_crate,
                "The models",
                &types_dependencies(&generated.features, &generated.shared_features),
            ),
        ),
        rust(
            format!("{name}-types/src/lib.rs"),
            format!(
                "{header}//! The models of {source}.\n\n// typify names a variant after its value: `+1` is `plus1`.\n#[allow(clippy::all, clippy::pedantic, unused_imports, dead_code, non_camel_case_types)]\n#[rustfmt::skip]\nmod generated;\n\npub use generated::*;\n"
            ),
        ),
        text(format!("{name}-types/src/generated.rs"), generated.types),
        text(
            format!("{name}-client/Cargo.toml"),
            crate_manifest(
                &format!("{name}-client"),
                "The client (progenitor)",
                &client_dependencies(&types_crate, &generated.client_uses, &generated.features),
            ),
        ),
        rust(format!("{name}-client/src/lib.rs"), format!("{header}{CLIENT_LIB}")),
        text(format!("{name}-client/src/generated.rs"), generated.client),
        text(
            format!("{name}-server/Cargo.toml"),
            crate_manifest(
                &format!("{name}-server"),
                "The server trait and its axum router",
                &server_dependencies(&types_crate),
            ),
        ),
        rust(format!("{name}-server/src/lib.rs"), format!("{header}{SERVER_LIB}")),
        text(format!("{name}-server/src/generated.rs"), generated.server),
        rust(
            format!("{name}-server/src/main.rs"),
            format!("{header}{}", SERVER_MAIN.replace("{crate}", &name.replace('-', "_"))),
        ),
        text(format!("{name}-server/src/schemas.json"), generated.server_schemas),
        text(format!("{name}-server/src/mock.json"), mock_plan),
        text(format!("{RUNTIME_CRATE}/Cargo.toml"), runtime_manifest()),
    ];
    files.extend(super::xtask::files(name, source).into_iter().map(|(path, contents)| match path.ends_with(".rs") {
        true => rust(path, contents),
        false => text(path, contents),
    }));
    files.push(text(
        "README.md".into(),
        crate::timings::timed("write/readme", || {
            let cli_source = cli.iter().flatten().find(|(path, _, _)| path.ends_with("/generated.rs"));
            let cli_source = cli_source.map(|(_, source, _)| source.as_str());
            readme(&spec, name, source, &generated.builders, &generated.features, &paginated, cli_source)
        })?,
    ));
    for (path, contents, formatted) in cli.into_iter().flatten() {
        files.push(File { path, contents, rustfmt: formatted });
    }
    files.extend(RUNTIME_FILES.iter().map(|(file, text)| {
        rust(
            format!("{RUNTIME_CRATE}/src/{file}"),
            format!("// Copied by `openapi-workspace` from its runtime crate's src/{file}.\n\n{text}"),
        )
    }));
    Ok(Standalone { files, notes, paginated })
}

/// The workspace's README: how to run its mock, then every operation with its samples (the
/// client's call and curl's), written as `cargo xtask codegen` writes ours.
/// `paginated`: the operations with streams, and the parameter each is paged by; `cli`: the
/// command line's source, when the workspace has one.
fn readme(
    spec: &crate::read::Spec,
    name: &str,
    source: &str,
    builders: &crate::write::samples::Builders,
    groups: &[String],
    paginated: &[(String, String)],
    cli: Option<&str>,
) -> Result<String> {
    let rust_name = name.replace('-', "_");
    let variables = rust_name.to_ascii_uppercase();
    let flavour = crate::write::samples::Flavour {
        client_crate: format!("{rust_name}_client"),
        types: format!("{rust_name}_client::types"),
        prelude: Some(format!("{rust_name}_client::install_crypto_provider();")),
        connect: None,
        cli: cli.map(|_| format!("cargo run -q -p {name}-cli --")),
        base_url_variable: format!("{variables}_BASE_URL"),
        token_variable: format!("{variables}_TOKEN"),
        webhooks: None,
    };
    let samples = crate::write::samples::samples(spec, builders, cli, &flavour).map_err(|error| spec.locate(error))?;
    let original = spec.original();
    let title = original.pointer("/info/title").and_then(|t| t.as_str()).unwrap_or(name);
    let mut out = format!(
        "<!-- @generated by openapi-workspace from {source}. -->\n\n# {title}\n\n\
         The crates `{name}-types`, `{name}-client` and `{name}-server`, generated from `{source}`. \
         `cargo run -p {name}-server` serves the API as a mock (each operation answers its documented \
         success with the document's example, after checking the request as the real router does; \
         `cargo run -p {name}-server -- --stateful` keeps what a `POST` to a collection creates, for its \
         item's `GET`, `PUT`, `PATCH`, `DELETE` and its collection's list, `openapi-workspace mock`'s \
         engine, with its `--seed examples|none|FILE`, `--control-prefix PREFIX` and `--credential SECRET`; \
         the state is in memory, and `openapi-workspace mock --database FILE` keeps one in a file); the samples below call it once the shell knows where it is and what credential to send \
         (any, to the mock):\n\n\
         ```sh\nexport {variables}_BASE_URL=http://127.0.0.1:8080 {variables}_TOKEN=any\n```\n\n\
         The Rust samples are statements of an `async fn` returning `Result<(), Box<dyn std::error::Error>>`, \
         with `{name}-client`, `serde_json` and `uuid` among its crate's dependencies.\n"
    );
    if cli.is_some() {
        out.push_str(&format!(
            "\n`{name}-cli` is the API from a shell: one subcommand per operation (its operationId in kebab case), \
             its parameters and body fields as flags (or `--json-body FILE`; a body of bytes `--body-file FILE`, `-` \
             for standard input), an array or object flag as JSON (`--ids '[1,2]'`), the answer's JSON on stdout \
             (bytes as they come), an error's on stderr (exit 1; a usage error exits 2). The base URL comes from `--base-url` or `{variables}_BASE_URL`, \
             a credential from `{variables}_TOKEN` (never a flag: it stays out of shell history), given to every \
             scheme the document defines (a basic one as `user:password`); `--max-attempts` and `--deadline` set \
             its retries. `cargo install --path {name}-cli` puts `{name}` on the path; the samples below run it \
             with `cargo run`.\n"
        ));
    }
    let groups: Vec<&String> = groups.iter().filter(|group| *group != crate::model::groups::UNREACHED).collect();
    if let Some(group) = groups.first() {
        out.push_str(&format!(
            "\nEach group of operations (a tag of the document, or the first segment of the paths) is a feature of \
             `{name}-client`, all on by default; a crate calling a few groups builds only their methods and the \
             models they reach: `{name}-client = {{ path = \"…\", default-features = false, features = \
             [\"tls\", \"{group}\"] }}`. The groups: {}.\n",
            groups.iter().map(|group| format!("`{group}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    let keyed = crate::model::idempotency::keys(&spec.raw)?;
    let keyed = match keyed.is_empty() {
        true => "no operation of this document names one (`x-idempotency-key`, or an `Idempotency-Key` header \
                 parameter), so no `POST` is retried once it was sent"
            .to_owned(),
        false => keyed.iter().map(|(operation, _)| format!("`{operation}`")).collect::<Vec<_>>().join(", "),
    };
    out.push_str(&format!(
        "\n## Retries\n\n\
         The client retries on its own, as `RetryPolicy::default()` says (its documentation, in \
         `{RUNTIME_CRATE}/src/client/retry.rs`, gives each default and why): connection errors and the statuses \
         that say \"not now\", with jittered waits, `Retry-After` obeyed, a deadline per call and a retry budget \
         per client. Idempotent methods are retried; `POST` and `PATCH` only when they carry their idempotency \
         key: {keyed}. `Client::new(url, Config::new().retry(…))` changes the policy, \
         `client.with_retry(RetryPolicy::none())` turns it off for a call. Each attempt has 15 s unless \
         `Config::timeout` or, for a call, `client.with_timeout(…)` says otherwise; `Config::header` and \
         `client.with_header(…)` add a header to every call or to one.\n\n\
         ## Errors\n\n\
         Where an operation's error statuses have different bodies, its error is an enum with a variant per \
         status (`NotFound(body)`, `UnprocessableEntity(body)`, `ClientError` for `4XX`, `Default`, and \
         `Unexpected {{ status, body }}` for a status the document does not list), inside \
         `Error::ErrorResponse`: the samples above match each operation's.\n"
    ));
    if !paginated.is_empty() {
        let listed: Vec<String> =
            paginated.iter().map(|(operation, param)| format!("`{operation}` (`{param}`)")).collect();
        out.push_str(&format!(
            "\n## Lists\n\n\
             A paginated operation has `{{operation}}_pages`, a stream of its pages, and `{{operation}}_stream`, one of \
             every item across them, each page through the operation's own call and its retries; the stream sets \
             the paging parameter. The operations, and the parameter each is paged by: {}.\n",
            listed.join(", ")
        ));
    }
    out.push_str(&format!(
        "\n## Keeping it in step with the document\n\n\
         The crates are generated: change `{source}` and generate them again, never edit them by hand. The \
         workspace's `xtask` runs the `openapi-workspace` that wrote it (version {version}; it refuses another, \
         saying how to install this one):\n\n\
         ```sh\ncargo xtask codegen           # writes the crates again from {source}\n\
         cargo xtask codegen --check   # CI: fails with a unified diff when they are not what it generates\n```\n",
        version = super::xtask::VERSION
    ));
    out.push_str("\n## Operations\n");
    for sample in &samples {
        out.push_str(&format!(
            "\n### `{} {}` ({})\n\n{}",
            sample.method,
            sample.path,
            sample.operation_id,
            crate::write::samples::markdown(sample)
        ));
    }
    let without: Vec<String> =
        crate::write::samples::unsampled(spec, &samples, &flavour).iter().map(|id| format!("`{id}`")).collect();
    if !without.is_empty() {
        out.push_str(&format!(
            "\nWithout samples yet (their bodies are not JSON, or their parameters not ones the samples write): {}.\n",
            without.join(", ")
        ));
    }
    Ok(out)
}

/// `cli`: whether the workspace has its command line (`NAME-cli`), a member but not a default one:
/// `cargo run` serves the mock.
fn workspace_manifest(name: &str, source: &str, cli: bool) -> String {
    let cli = if cli { format!(", \"{name}-cli\"") } else { String::new() };
    format!(
        "# @generated by openapi-workspace from {source}: `cargo xtask codegen` writes it again.\n\n[workspace]\nresolver = \"3\"\nmembers = [\"{name}-types\", \"{name}-client\", \"{name}-server\"{cli}, \"{RUNTIME_CRATE}\", \"xtask\"]\n# `cargo run` serves the mock (the xtask is `cargo xtask`).\ndefault-members = [\"{name}-types\", \"{name}-client\", \"{name}-server\", \"{RUNTIME_CRATE}\"]\n"
    )
}

/// A crate's manifest: `dependencies` (which may end in a `[features]` table) after the ones
/// every crate has.
fn crate_manifest(name: &str, what: &str, dependencies: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\ndescription = \"{what}, generated by openapi-workspace.\"\nversion = \"0.1.0\"\nedition = \"{STANDALONE_EDITION}\"\nrust-version = \"1.88\"\npublish = false\n\n[dependencies]\n{MODEL_DEPENDENCIES}{dependencies}"
    )
}

// The versions our own crates build with (the workspace's Cargo.toml; a test holds them to it).
/// What all three crates use: the models' serialisation and their field types.
const MODEL_DEPENDENCIES: &str = r#"serde = { version = "1", features = ["derive"] }
serde_json = "1"
chrono = { version = "0.4", default-features = false, features = ["serde", "std", "clock"] }
uuid = { version = "1", features = ["serde", "v4"] }
"#;

/// The types crate's dependencies and features: `groups`, each gating the models its operations
/// reach, all on by default (`schemars`'s registry names every model, so it turns them all on);
/// each turns on the features of the sets of groups it is in (`shared`).
fn types_dependencies(groups: &[String], shared: &crate::write::client::features::Shared) -> String {
    let quoted: Vec<String> = groups.iter().map(|group| format!("\"{group}\"")).collect();
    let (default, schemars) = match groups {
        [] => (String::new(), String::new()),
        _ => (
            format!(
                "# One feature per group of operations (a tag, or the first segment of the paths): the\n\
                 # models those operations reach. `unreached-models`: the ones no operation reaches.\n\
                 default = [{}]\n",
                quoted.join(", ")
            ),
            format!(", {}", quoted.join(", ")),
        ),
    };
    let each: String = groups
        .iter()
        .map(|group| {
            let sets: Vec<String> =
                shared.iter().filter(|(_, set)| set.contains(group)).map(|(name, _)| format!("\"{name}\"")).collect();
            format!("{group} = [{}]\n", sets.join(", "))
        })
        .collect();
    let sets = match shared.is_empty() {
        true => String::new(),
        false => format!(
            "# The models several groups reach, by the set of groups reaching them: each set's feature is\n\
             # turned on by the groups above, not meant to be named.\n{}",
            shared.iter().map(|(name, _)| format!("{name} = []\n")).collect::<String>()
        ),
    };
    format!(
        r#"regress = "0.12"
schemars = {{ version = "0.8.22", features = ["chrono", "uuid1"], optional = true }}

[features]
{default}schemars = ["dep:schemars"{schemars}]
{each}{sets}"#
    )
}

/// The client's dependencies and features: with `groups`, one per group, each turning on the
/// operations of the group and (in the types crate) the models they reach; all on by default.
fn client_dependencies(types_crate: &str, uses: &[&str], groups: &[String]) -> String {
    let extra: String = uses
        .iter()
        .map(|name| match *name {
            "futures" => "futures = \"0.3\"\n",
            "base64" => "base64 = \"0.22\"\n",
            "rand" => "rand = \"0.9\"\n",
            RUNTIME_CRATE => "openapi-workspace-runtime = { path = \"../openapi-workspace-runtime\", default-features = false, features = [\"client\"] }\n",
            other => unreachable!("no version is known for {other}"),
        })
        .collect();
    let (types_features, default, each) = match groups {
        [] => ("", String::new(), String::new()),
        _ => (
            ", default-features = false",
            groups.iter().map(|group| format!(", \"{group}\"")).collect(),
            format!(
                "# One feature per group of operations (a tag, or the first segment of the paths): its\n\
                 # methods, and the models they reach. Turn the defaults off to build only the groups named.\n{}",
                groups.iter().map(|group| format!("{group} = [\"{types_crate}/{group}\"]\n")).collect::<String>()
            ),
        ),
    };
    format!(
        r#"{types_crate} = {{ path = "../{types_crate}"{types_features} }}
progenitor-client = "=0.15.1"
reqwest = {{ version = "0.13", default-features = false, features = ["json", "query", "stream"] }}
rustls = {{ version = "0.23", default-features = false, features = ["ring", "std", "tls12"], optional = true }}
{extra}
[features]
default = ["tls"{default}]
tls = ["dep:rustls", "reqwest/rustls-no-provider"]
{each}"#
    )
}

fn server_dependencies(types_crate: &str) -> String {
    format!(
        r#"{types_crate} = {{ path = "../{types_crate}" }}
{RUNTIME_CRATE} = {{ path = "../{RUNTIME_CRATE}" }}
axum = "0.8"
tokio = {{ version = "1", features = ["macros", "rt-multi-thread", "net", "fs", "io-util"] }}
"#
    )
}

/// The runtime crate's manifest: what `crates/openapi-workspace-runtime/Cargo.toml` asks for,
/// in its edition (2024: its code is ours, not progenitor's).
fn runtime_manifest() -> String {
    format!(
        r#"[package]
name = "{RUNTIME_CRATE}"
description = "The runtime of the generated server and client, copied by `openapi-workspace`."
version = "0.1.0"
edition = "2024"
rust-version = "1.88"
publish = false

[dependencies]
# The server's half (`server`).
axum = {{ version = "0.8", optional = true }}
http-body-util = {{ version = "0.1", optional = true }}
uuid = {{ version = "1", features = ["serde", "v4"], optional = true }}
jsonschema = {{ version = "0.60", default-features = false, optional = true }}
serde_path_to_error = {{ version = "0.1", optional = true }}
serde_urlencoded = {{ version = "0.7", optional = true }}
form_urlencoded = {{ version = "1", optional = true }}
futures-util = {{ version = "0.3", default-features = false, features = ["std"], optional = true }}
multer = {{ version = "3", optional = true }}
tempfile = {{ version = "3", optional = true }}
tokio = {{ version = "1", features = ["macros", "rt-multi-thread", "net", "fs", "io-util"], optional = true }}
serde_html_form = {{ version = "0.4", default-features = false, features = ["de", "std"], optional = true }}
tower = {{ version = "0.5", optional = true }}
base64 = {{ version = "0.22", optional = true }}
# The client's half (`client`).
progenitor-client = {{ version = "=0.15.1", optional = true }}
reqwest = {{ version = "0.13", default-features = false, features = ["json", "query", "stream"], optional = true }}
futures = {{ version = "0.3", optional = true }}
# Retries: their waits, jitter and spans, and `Retry-After` as a date.
tracing = {{ version = "0.1", optional = true }}
rand = {{ version = "0.9", optional = true }}
httpdate = {{ version = "1", optional = true }}
# A kept-alive connection closed before an answer: hyper's error, under reqwest's.
hyper = {{ version = "1", optional = true }}
# Both.
serde = {{ version = "1", features = ["derive"], optional = true }}
serde_json = {{ version = "1", optional = true }}
percent-encoding = {{ version = "2", optional = true }}
itoa = {{ version = "1", optional = true }}

[features]
default = ["server"]
server = [
    "dep:axum", "dep:http-body-util", "dep:uuid", "dep:jsonschema", "dep:serde_path_to_error",
    "dep:serde_urlencoded", "dep:form_urlencoded", "dep:futures-util", "dep:multer", "dep:tempfile",
    "dep:tokio", "dep:serde_html_form", "dep:tower", "dep:base64", "dep:serde", "dep:serde_json",
    "dep:percent-encoding", "dep:itoa", "forms",
]
client = [
    "dep:progenitor-client", "dep:reqwest", "dep:futures", "dep:serde", "dep:serde_json", "dep:percent-encoding",
    "dep:form_urlencoded", "dep:tokio", "tokio/time", "dep:uuid", "dep:tracing", "dep:rand", "dep:httpdate", "dep:hyper",
    "forms",
]
# Nested values as form pairs (`forms`).
forms = ["dep:serde_json"]

[dev-dependencies]
jsonschema = {{ version = "0.60", default-features = false, features = ["conformance"] }}
"#
    )
}

const CLIENT_LIB: &str = r#"//! The client, generated by progenitor: every operation is a method on [`Client`] returning a
//! builder; `.send().await` performs it.

#[allow(clippy::all, clippy::pedantic, unused_imports, dead_code)]
#[rustfmt::skip]
mod generated;

pub use generated::*;

/// Makes ring rustls's process-wide crypto provider, unless one is already installed: reqwest is
/// built without one, so call this before building a client. Without the `tls` feature there is
/// no TLS and nothing to install.
pub fn install_crypto_provider() {
    #[cfg(feature = "tls")]
    let _ = rustls::crypto::ring::default_provider().install_default();
}
"#;

const SERVER_MAIN: &str = r#"//! `cargo run`: the API as a mock, at http://127.0.0.1:8080 (or the port in `PORT`). Every
//! operation answers its first documented success with the document's example (or a value built
//! from its schema), after authenticating (any credential of a kind it takes) and validating the
//! request as the real router does. It is the mock engine `openapi-workspace mock` serves, here
//! with the plan generated beside this file (`mock.json`); `cargo run -- --stateful` keeps what is
//! created (see the workspace's README), with the command's `--seed`, `--control-prefix` and
//! `--credential` too. Serve your implementation with `{crate}_server::router`, or with
//! `mock_router` while some operations are still to be written.

use openapi_workspace_runtime::mock;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut plan: mock::Plan = serde_json::from_str(include_str!("mock.json")).expect("the generated plan");
    plan.schemas = serde_json::from_str(include_str!("schemas.json")).expect("the generated schemas");
    let port = std::env::var("PORT").ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(8080);
    let options = match mock::Options::from_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(2);
        }
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("mock at http://{}", listener.local_addr()?);
    axum::serve(listener, mock::router_with(plan, options).map_err(std::io::Error::other)?).await
}
"#;

const SERVER_LIB: &str = r#"//! The server side: the generated [`Api`] trait (one method per operation, each with a default
//! that answers `501`) and [`router`], the axum router that authenticates, parses and validates
//! requests before calling it.

#[allow(clippy::all, clippy::pedantic)]
#[rustfmt::skip]
mod generated;
/// The runtime the generated code calls (the workspace's `openapi-workspace-runtime` crate).
pub use openapi_workspace_runtime as runtime;

pub use generated::*;
pub use runtime::{ApiError, RequestContext};
"#;

#[cfg(test)]
mod tests {
    /// Every source file of the runtime crate is carried into a standalone workspace: one left
    /// out compiles here (by path) and fails there.
    #[test]
    fn the_runtime_is_carried_whole() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../openapi-workspace-runtime/src");
        let mut found = Vec::new();
        for directory in [root.clone(), root.join("client"), root.join("server"), root.join("server/mock")] {
            for entry in std::fs::read_dir(&directory).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|extension| extension == "rs") {
                    found.push(path.strip_prefix(&root).unwrap().to_str().unwrap().to_owned());
                }
            }
        }
        found.sort();
        let mut carried: Vec<String> = super::RUNTIME_FILES.iter().map(|(name, _)| (*name).to_owned()).collect();
        carried.sort();
        assert_eq!(carried, found);
    }
}

//! Every sample a standalone workspace's README shows (`cargo xtask codegen --spec`), for each
//! sample document: the Rust ones compiled (this file includes them, as the build script writes
//! them) and run in a child process of this binary with the document's variables set, as a
//! reader's program would be, and the curl ones run with `sh`; each against the document's mock
//! (`mock_router` with `MockApi`, which checks each request as the real router does), and each
//! answered with its documented status.
//!
//! A test without libtest's harness (`harness = false`): `main` is the test, and the child's
//! entry point too.

mod support;

use std::process::ExitCode;
use std::sync::Arc;

/// The line on which a child prints a sample's answer: the operation, then its status.
const ANSWER: &str = "sample answered: ";

macro_rules! documents {
    ($($name:ident),* $(,)?) => {
        $(
            // This harness reads each sample's operation, status and curl line only; the samples
            // are written to be included anywhere.
            #[allow(dead_code, unreachable_pub, unused_qualifications)]
            mod $name {
                include!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/samples.rs"));
            }
        )*

        /// The child: runs every Rust sample of `document`, printing each one's status. It
        /// installs the TLS crypto provider first, as a reader's program does (reqwest is built
        /// without one here, see payments-client).
        async fn child(document: &str) -> ExitCode {
            let _ = rustls::crypto::ring::default_provider().install_default();
            match document {
                $(stringify!($name) => {
                    for sample in $name::SHELL {
                        match $name::run(sample.operation_id, &$name::Values::default()).await {
                            Ok((status, _)) => println!("{ANSWER}{} {status}", sample.operation_id),
                            Err(error) => println!("{ANSWER}{} failed: {error}", sample.operation_id),
                        }
                    }
                    ExitCode::SUCCESS
                })*
                other => {
                    eprintln!("no document {other}");
                    ExitCode::FAILURE
                }
            }
        }

        /// Runs every document's samples against its generated mock and against the mock
        /// engine serving its plan (`openapi-workspace mock`): each answered its documented
        /// status, and each curl sample answered alike, byte for byte, by both. What went wrong,
        /// one line each, and the count run.
        async fn parent() -> (Vec<String>, usize) {
            let (mut failures, mut run) = (Vec::new(), 0);
            $(
                let generated = support::serve(openapi_workspace_output::$name::server::mock_router(Arc::new(
                    openapi_workspace_output::$name::server::MockApi,
                )))
                .await;
                let plan = include_str!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/mock.json"));
                let engine = support::serve(openapi_workspace_runtime::mock::router(
                    serde_json::from_str(plan).expect("the build script's plan"),
                ))
                .await;
                let name = stringify!($name);
                // Each server's curl answers, in the samples' order, compared after.
                let mut curls: Vec<Vec<String>> = Vec::new();
                for (server, url) in [("the generated mock", &generated), ("the mock engine", &engine)] {
                    let environment = environment(name, url);
                    let (answers, stderr) = rust_answers(name, &environment).await;
                    let mut answered = Vec::new();
                    for sample in $name::SHELL {
                        let expected = sample.status.to_string();
                        let rust = answers.iter().find(|(id, _)| id == sample.operation_id).map(|(_, said)| said.as_str());
                        if rust != Some(expected.as_str()) {
                            failures.push(format!(
                                "{name}, {server}: the Rust sample of {} answered {rust:?}{}",
                                sample.operation_id,
                                if rust.is_none() { format!(" (the child said: {stderr})") } else { String::new() }
                            ));
                        }
                        let curl = curl_answer(sample.curl, &environment).await;
                        if curl.lines().next() != Some(expected.as_str()) {
                            failures.push(format!("{name}, {server}: the curl sample of {} answered {curl}:\n{}", sample.operation_id, sample.curl));
                        }
                        answered.push(curl);
                        run += 2;
                    }
                    curls.push(answered);
                }
                for (sample, (from_generated, from_engine)) in $name::SHELL.iter().zip(curls[0].iter().zip(&curls[1])) {
                    if from_generated != from_engine {
                        failures.push(format!(
                            "{name}: {} answered differently by the generated mock and the engine:\n{from_generated}\n---\n{from_engine}",
                            sample.operation_id
                        ));
                    }
                }
            )*
            (failures, run)
        }
    };
}

documents!(
    bounds,
    events,
    generality,
    multipart,
    nullable_and_enums,
    openapi_3_1,
    openapi_3_2,
    parameter_styles,
    parameters_and_responses,
    pet_store,
    query_arrays,
    repairs,
    security,
    shop,
    webhooks,
);

/// Each Rust sample of `document` as the child ran it: the operation and its status (or why it
/// failed); and what the child wrote on stderr.
async fn rust_answers(document: &str, environment: &[(String, String)]) -> (Vec<(String, String)>, String) {
    let me = std::env::current_exe().expect("this test's binary");
    let output = tokio::process::Command::new(me)
        .args(["samples-child", document])
        .envs(environment.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .expect("the test's binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answers = stdout
        .lines()
        .filter_map(|line| line.strip_prefix(ANSWER))
        .filter_map(|answer| answer.split_once(' '))
        .map(|(id, said)| (id.to_owned(), said.to_owned()))
        .collect();
    (answers, String::from_utf8_lossy(&output.stderr).trim().to_owned())
}

/// The variables a document's samples read: the server's URL and a credential (any, to a mock).
fn environment(document: &str, url: &str) -> [(String, String); 2] {
    let variables = document.to_ascii_uppercase();
    [(format!("{variables}_BASE_URL"), url.to_owned()), (format!("{variables}_TOKEN"), "any".to_owned())]
}

/// What a curl sample was answered: its status, then its content type and body, a line each
/// (the status alone when curl failed, with why).
async fn curl_answer(curl: &str, environment: &[(String, String)]) -> String {
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{curl} -sS -w '\\n%{{http_code}}\\n%{{content_type}}'"))
        .envs(environment.iter().map(|(k, v)| (k, v)))
        .output()
        .await
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return format!("{} ({})", stdout.trim(), String::from_utf8_lossy(&output.stderr));
    }
    // The body, then the status and content type curl wrote after it.
    let mut lines = stdout.rsplitn(3, '\n');
    let (content_type, status, body) =
        (lines.next().unwrap_or_default(), lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
    format!("{status}\n{content_type}\n{body}")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    match args.as_slice() {
        [mode, document] if mode == "samples-child" => runtime.block_on(child(document)),
        // What libtest would be given (`--nocapture`, a filter): the samples run either way.
        _ => {
            let (failures, run) = runtime.block_on(parent());
            if failures.is_empty() {
                println!("samples of the sample documents run, each answered its documented status: {run}");
                ExitCode::SUCCESS
            } else {
                eprintln!("{} of {run} samples failed:\n{}", failures.len(), failures.join("\n"));
                ExitCode::FAILURE
            }
        }
    }
}

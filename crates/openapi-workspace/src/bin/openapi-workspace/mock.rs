//! `openapi-workspace mock --spec FILE`: the document served at once, by the mock engine a
//! generated server's mock runs too (`openapi_workspace_runtime::mock`): nothing generated, nothing
//! compiled. Each request is logged on stderr; browsers may call it from any origin (CORS).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use clap::Args;
use openapi_workspace_runtime::mock::{Keep, Options, Seed};

use crate::mock_database::Database;

use crate::messages::Messages;

#[derive(Args)]
pub(crate) struct Mock {
    /// The OpenAPI document (YAML or JSON; one split across files is followed).
    #[arg(long, value_name = "FILE")]
    spec: PathBuf,
    /// Where to listen (a port of 0 takes a free one; the address is printed on stdout).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Keep state, in memory: what a `POST` to a collection creates, a `GET` of its item finds
    /// (resources inferred from the paths: see the README).
    #[arg(long)]
    stateful: bool,
    /// What a stateful mock starts with: `examples` (each top-level resource's documented
    /// example), `none`, or a JSON file of items by collection path
    /// (`{"/owners": [{"id": 1, "name": "Ada"}], "/owners/1/pets": []}`).
    #[arg(long, value_name = "examples|none|FILE", default_value = "examples")]
    seed: String,
    /// Where a stateful mock's own operations are served: `POST PREFIX/reset` forgets every
    /// change and seeds it again.
    #[arg(long, value_name = "PREFIX", default_value = "/__mock")]
    control_prefix: String,
    /// Let in only this credential (a bearer token, an api key, a basic password), answering
    /// `401` to any other; without it, any credential of a kind an operation takes is let in.
    #[arg(long, value_name = "SECRET")]
    credential: Option<String>,
    /// Keep a stateful mock's items in this SQLite file (made if absent), so they outlive the
    /// process: each change is on disk before it is answered.
    #[arg(long, value_name = "FILE", requires = "stateful")]
    database: Option<PathBuf>,
}

pub(crate) fn mock(args: &Mock, messages: &Messages) -> ExitCode {
    let started = Instant::now();
    let (plan, notes) = match openapi_workspace::mock_plan(&args.spec) {
        Ok(read) => read,
        Err(error) => {
            messages.error(&error);
            return ExitCode::from(crate::TROUBLE);
        }
    };
    messages.notes(&args.spec, &notes);
    let (title, operations, resources) = (plan.title.clone(), plan.operations.len(), plan.resources.len());
    let kept = plan.operations.iter().filter(|operation| operation.state.is_some()).count();
    let seed = match Seed::read(&args.seed) {
        Ok(seed) => seed,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(crate::TROUBLE);
        }
    };
    let keep: Option<Arc<dyn Keep>> = match &args.database {
        Some(path) => match Database::open(path) {
            Ok(database) => Some(Arc::new(database)),
            Err(error) => {
                eprintln!("error: cannot open the database {}: {error}", path.display());
                return ExitCode::from(crate::TROUBLE);
            }
        },
        None => None,
    };
    let options = Options {
        stateful: args.stateful,
        seed,
        control: Some(args.control_prefix.clone()),
        credential: args.credential.clone(),
        keep,
    };
    let router = match openapi_workspace_runtime::mock::router_with(plan, options) {
        Ok(router) => {
            router.layer(axum::middleware::from_fn(log)).layer(tower_http::cors::CorsLayer::very_permissive())
        }
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(crate::TROUBLE);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::from(crate::TROUBLE);
        }
    };
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen).await?;
        let address = listener.local_addr()?;
        if !messages.quiet {
            let answers = match args.stateful {
                true => format!(
                    "{resources} resources kept in memory by {kept} operations, the other answers the document's examples"
                ),
                false => "every answer the document's example".to_owned(),
            };
            eprintln!(
                "{title}: {operations} operations, ready in {:.2} s ({answers})",
                started.elapsed().as_secs_f64()
            );
        }
        println!("mock at http://{address}");
        axum::serve(listener, router).with_graceful_shutdown(async { drop(tokio::signal::ctrl_c().await) }).await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: cannot serve at {}: {error}", args.listen);
            ExitCode::from(crate::TROUBLE)
        }
    }
}

/// One line a request on stderr: method, path and query, status, time taken.
async fn log(request: Request, next: Next) -> Response {
    let (method, uri, started) = (request.method().clone(), request.uri().clone(), Instant::now());
    let response = next.run(request).await;
    eprintln!("{method} {uri} {} {:.1} ms", response.status().as_u16(), started.elapsed().as_secs_f64() * 1000.0);
    response
}

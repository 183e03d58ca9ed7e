//! The router's table: each operation's route and method, and what it needs of the request's
//! URL (a scheme that reads the query for its credential).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::validation::body_validator;
use crate::model::operation::{MediaKind, Op};
use crate::model::security;

/// The receiver's own URL (`/`): senders post every notification to one URL, so there a
/// notification goes to the webhook whose body schema it meets, the one whose name the body
/// states when several do (`runtime::which_body`), among the webhooks that take a JSON body and
/// nothing from the path or the query. `None` when no webhook can be told apart so, or one is
/// named so that it is served at `/` already.
pub(super) fn one_url(ops: &[Op], schemes: &[security::Scheme], rt: &syn::Path) -> Option<(TokenStream, TokenStream)> {
    let candidates: Vec<&Op> = ops
        .iter()
        .filter(|op| {
            op.method == "post"
                && op.path_params.is_empty()
                && op.query_params.is_empty()
                && !needs_uri(op, schemes)
                && op
                    .body
                    .as_ref()
                    .is_some_and(|b| b.media.len() == 1 && matches!(b.media[0].kind, MediaKind::Json { .. }))
        })
        .collect();
    if candidates.is_empty() || ops.iter().any(|op| op.path == "/") {
        return None;
    }
    let validators = candidates.iter().map(|op| {
        let (name, validator) = (op.path.trim_start_matches('/'), body_validator(op, 0));
        quote!((#name, &shared.validators.#validator))
    });
    let arms = candidates.iter().enumerate().map(|(i, op)| {
        let handler = &op.fn_name;
        quote! { #i => #handler::<P, A>(State(shared), axum::extract::Request::from_parts(parts, bytes.into())).await, }
    });
    let route = quote! {
        .route("/", axum::routing::post(any_webhook::<P, A>).fallback(|| async { #rt::method_not_allowed("POST") }))
    };
    let handler = quote! {
        /// `POST /`: a notification posted to the receiver's own URL, handed to the webhook whose
        /// body schema it meets (the one whose name the body states, when several do).
        async fn any_webhook<P: Send + 'static, A: Api<P>>(
            State(shared): State<Arc<Shared<A>>>,
            request: axum::extract::Request,
        ) -> Result<Response, ApiError> {
            let (parts, request_body) = request.into_parts();
            let bytes = #rt::read_body(request_body).await?;
            let which = #rt::which_body(&bytes, &[#(#validators),*])?;
            match which {
                #(#arms)*
                _ => unreachable!("which_body answers the index of one of the validators"),
            }
        }
    };
    Some((route, handler))
}

/// Whether one of the operation's requirements reads the URI (an api key in the query).
pub(super) fn needs_uri(op: &Op, schemes: &[security::Scheme]) -> bool {
    op.requirement.as_ref().is_some_and(|r| r.alternatives.iter().flatten().any(|i| schemes[*i].needs_uri()))
}

pub(super) fn routes(ops: &[Op], rt: &syn::Path) -> Vec<TokenStream> {
    let mut paths: Vec<&str> = Vec::new();
    for op in ops {
        if !paths.contains(&op.path.as_str()) {
            paths.push(&op.path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let here: Vec<&Op> = ops.iter().filter(|op| op.path == path).collect();
            // Another method answers 405 naming these, in the message and in `Allow` (axum
            // answers HEAD wherever GET is served).
            let mut allowed: Vec<String> = here.iter().map(|op| op.http_method()).collect();
            if allowed.iter().any(|method| method == "GET") {
                allowed.push("HEAD".into());
            }
            allowed.sort();
            let allowed = allowed.join(", ");
            if here.iter().all(|op| crate::read::document::METHODS.contains(&op.method.as_str())) {
                let mut methods = here.iter().map(|op| (format_ident!("{}", op.method), &op.fn_name));
                let (first, first_handler) = methods.next().expect("a path has an operation");
                let rest = methods.map(|(method, handler)| quote!(.#method(#handler::<P, A>)));
                return quote! {
                    .route(
                        #path,
                        axum::routing::#first(#first_handler::<P, A>) #(#rest)*
                            .fallback(|| async { #rt::method_not_allowed(#allowed) }),
                    )
                };
            }
            // axum's method router knows 3.0's methods only, and would add its `Allow` to every
            // answer of its fallback: a path with others (OpenAPI 3.2's QUERY and
            // `additionalOperations`) tells every method apart itself. HEAD is GET's, whose
            // body hyper does not send.
            let arms = here.iter().map(|op| {
                let handler = &op.fn_name;
                let method = op.http_method();
                let method = match method.as_str() {
                    "GET" => quote!("GET" | "HEAD"),
                    _ => quote!(#method),
                };
                quote!(#method => axum::handler::Handler::call(#handler::<P, A>, request, shared).await,)
            });
            quote! {
                .route(
                    #path,
                    axum::routing::any(|State(shared): State<Arc<Shared<A>>>, request: axum::extract::Request| async move {
                        match request.method().as_str() {
                            #(#arms)*
                            _ => #rt::method_not_allowed(#allowed),
                        }
                    }),
                )
            }
        })
        .collect()
}

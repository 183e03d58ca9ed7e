//! The client's side of the document's security schemes: a `Credentials` the client is built
//! with (one setter per scheme), whose `apply`, called by progenitor's request hook, sends each
//! operation the credentials of the first of its requirements whose every scheme has one — in the
//! `Authorization` header (bearer, basic), or the header, query parameter or cookie an api key
//! goes in. The requirements are the server generator's (`model::security`), so client and
//! router read the document alike.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::view::View;
use crate::error::Result;
use crate::model::security::{self, Kind, Place};

/// The generated `Credentials`, and whether it encodes basic credentials (the client crate then
/// needs `base64`).
pub(crate) struct Client {
    pub tokens: TokenStream,
    pub basic: bool,
}

/// `None` when no operation asks for a credential (the client then holds none).
pub(crate) fn client(view: &View) -> Result<Option<Client>> {
    let openapi = &view.openapi;
    let schemes = security::schemes(openapi)?;
    let mut table = Vec::new();
    for (path, method, operation) in openapi.operations() {
        let Some(operation_id) = &operation.operation_id else { continue };
        let at = crate::read::document::pointer(&["paths", path, method]);
        let context = format!("{operation_id} ({} {path}) at {at}", method.to_uppercase());
        if let Some(requirement) = security::requirement(openapi, Some(operation), &schemes, &context)? {
            // progenitor names the operation in its hook by its method's name.
            table.push((crate::model::operation::method_name(operation_id), requirement.alternatives));
        }
    }
    if table.is_empty() {
        return Ok(None);
    }
    let used: std::collections::BTreeSet<usize> =
        table.iter().flat_map(|(_, alternatives)| alternatives.iter().flatten().copied()).collect();
    let basic = used.iter().any(|&i| schemes[i].kind == Kind::Basic);

    let setter = |i: usize| crate::model::names::field_ident(&schemes[i].name);
    let field = |i: usize| format_ident!("{}_", setter(i).to_string().trim_start_matches("r#").trim_matches('_'));
    let fields = used.iter().map(|&i| {
        let name = field(i);
        match schemes[i].kind {
            Kind::Basic => quote!(#name: Option<(String, String)>,),
            _ => quote!(#name: Option<tokens::Secret>,),
        }
    });
    let setters = used.iter().map(|&i| {
        let scheme = &schemes[i];
        let name = field(i);
        let setter = setter(i);
        let doc = format!(" Sends `{}` to the operations that take it: {}", scheme.name, sent_as(&scheme.kind));
        match scheme.kind {
            Kind::Basic => quote! {
                #[doc = #doc]
                pub fn #setter(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
                    self.#name = Some((username.into(), password.into()));
                    self
                }
            },
            _ => {
                let from = quote::format_ident!("{}_from", setter.to_string().trim_start_matches("r#"));
                let from_doc = format!(
                    " Sends `{}` as [`Self::{setter}`] does, asking `source` for it before every attempt \
                     (and to renew it once after a `401`).",
                    scheme.name
                );
                quote! {
                    #[doc = #doc]
                    pub fn #setter(mut self, value: impl Into<String>) -> Self {
                        self.#name = Some(tokens::Secret::Fixed(value.into()));
                        self
                    }
                    #[doc = #from_doc]
                    pub fn #from(mut self, source: impl tokens::TokenSource + 'static) -> Self {
                        self.#name = Some(tokens::Secret::Source(::std::sync::Arc::new(source)));
                        self
                    }
                }
            }
        }
    });
    let renewals = used.iter().filter(|&&i| schemes[i].kind != Kind::Basic).map(|&i| {
        let name = field(i);
        quote! {
            if let Some(secret) = &self.#name {
                renewed |= secret.renew().await;
            }
        }
    });
    let redacted = used.iter().map(|&i| {
        let (name, label) = (field(i), &schemes[i].name);
        quote!(.field(#label, &self.#name.as_ref().map(|_| "<set>")))
    });
    let arms = table.iter().map(|(operation_id, alternatives)| {
        let alternatives = alternatives.iter().map(|together| {
            let checks = together.iter().map(|&i| {
                let name = field(i);
                quote!(self.#name.is_some())
            });
            let sends = together.iter().map(|&i| send(&schemes[i].kind, &field(i)));
            quote! {
                if #(#checks)&&* {
                    #(#sends)*
                    return Ok(());
                }
            }
        });
        quote! { #operation_id => { #(#alternatives)* } }
    });
    let tokens = quote! {
        /// The credentials this client sends, one per security scheme of the document. Each
        /// operation is sent those of the first of its requirements whose every scheme has one
        /// here; an operation none of whose requirements is met is sent as it is (the server
        /// answers `401`).
        #[derive(Clone, Default)]
        pub struct Credentials {
            #(#fields)*
        }

        impl Credentials {
            /// No credentials yet.
            pub fn new() -> Self {
                Self::default()
            }

            #(#setters)*

            /// Adds to `request` (of `operation_id`) what it asks for, replacing what it carries
            /// (so that each attempt of a retried call sends the credentials of now).
            async fn apply(&self, operation_id: &str, request: &mut reqwest::Request) -> Result<(), tokens::CredentialError> {
                match operation_id {
                    #(#arms)*
                    _ => {}
                }
                Ok(())
            }
        }

        /// Credentials for each attempt of the retry loop.
        impl tokens::Authorize for Credentials {
            fn authorize<'a>(
                &'a self,
                operation: &'a str,
                request: &'a mut reqwest::Request,
            ) -> tokens::BoxFuture<'a, Result<(), tokens::CredentialError>> {
                Box::pin(self.apply(operation, request))
            }

            /// Renews every credential that comes from a source (the server does not say which
            /// one it refused).
            #[allow(unused_mut)]
            fn renew(&self) -> tokens::BoxFuture<'_, bool> {
                Box::pin(async move {
                    let mut renewed = false;
                    #(#renewals)*
                    renewed
                })
            }
        }

        /// Credentials that change: [`tokens::TokenSource`], given to a `*_from` setter.
        pub use openapi_workspace_runtime::client::tokens;

        /// Shows which credentials are set, never what they are.
        impl ::std::fmt::Debug for Credentials {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct("Credentials") #(#redacted)* .finish()
            }
        }

        /// A header value that is a secret: not shown by `Debug`, not compressed in HTTP/2.
        fn secret_header(value: &str) -> Result<reqwest::header::HeaderValue, tokens::CredentialError> {
            let mut value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| tokens::CredentialError::NotAHeaderValue)?;
            value.set_sensitive(true);
            Ok(value)
        }
    };
    Ok(Some(Client { tokens, basic }))
}

fn sent_as(kind: &Kind) -> String {
    match kind {
        Kind::Bearer => "`Authorization: Bearer <token>`.".into(),
        Kind::Basic => "`Authorization: Basic`.".into(),
        Kind::ApiKey(Place::Header(name)) => format!("the `{name}` header."),
        Kind::ApiKey(Place::Query(name)) => format!("the `{name}` query parameter."),
        Kind::ApiKey(Place::Cookie(name)) => format!("the `{name}` cookie."),
        Kind::Unsupported(why) => why.clone(),
    }
}

/// Statements that add the credential in field `name` to `request`.
fn send(kind: &Kind, name: &proc_macro2::Ident) -> TokenStream {
    match kind {
        Kind::Bearer => quote! {
            if let Some(secret) = &self.#name {
                let token = secret.get().await?;
                request.headers_mut().insert(reqwest::header::AUTHORIZATION, secret_header(&format!("Bearer {token}"))?);
            }
        },
        Kind::Basic => quote! {
            if let Some((username, password)) = &self.#name {
                use base64::Engine;
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
                request.headers_mut().insert(reqwest::header::AUTHORIZATION, secret_header(&format!("Basic {encoded}"))?);
            }
        },
        Kind::ApiKey(Place::Header(header)) => quote! {
            if let Some(secret) = &self.#name {
                request.headers_mut().insert(#header, secret_header(&secret.get().await?)?);
            }
        },
        Kind::ApiKey(Place::Query(parameter)) => quote! {
            if let Some(secret) = &self.#name {
                let key = secret.get().await?;
                let kept: Vec<(String, String)> =
                    request.url().query_pairs().filter(|(name, _)| name != #parameter).map(|(n, v)| (n.into_owned(), v.into_owned())).collect();
                let mut pairs = request.url_mut().query_pairs_mut();
                pairs.clear().extend_pairs(kept).append_pair(#parameter, &key);
            }
        },
        Kind::ApiKey(Place::Cookie(cookie)) => quote! {
            if let Some(secret) = &self.#name {
                let pair = format!("{}={}", #cookie, secret.get().await?);
                let before = request.headers().get(reqwest::header::COOKIE).and_then(|v| v.to_str().ok()).unwrap_or("");
                let prefix = format!("{}=", #cookie);
                let mut line: Vec<&str> = before.split("; ").filter(|c| !c.is_empty() && !c.starts_with(&prefix)).collect();
                line.push(&pair);
                let line = line.join("; ");
                request.headers_mut().insert(reqwest::header::COOKIE, secret_header(&line)?);
            }
        },
        // Never asked for: `requirement` refuses it.
        Kind::Unsupported(_) => TokenStream::new(),
    }
}

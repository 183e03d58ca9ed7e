//! What every generated client sends through: its `Config` (progenitor's inner type: the
//! credentials, when the document has any, and the runtime's `retry::Retries`), the table of
//! each operation's idempotency key (`model::idempotency`), and the `exec` hook that hands each
//! request to the runtime's retry loop. `Client::with_retry`, `with_timeout` and `with_header` are
//! the per-call overrides (the last two the runtime's `client::options`, put on in `pre`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::Result;
use crate::model::idempotency::{self, Key};
use crate::read::Spec;

/// The configuration type, the key table and `with_retry`; `credentials` when the client holds
/// `Credentials`.
pub(crate) fn client(spec: &Spec, credentials: bool) -> Result<TokenStream> {
    let keys = idempotency::keys(&spec.raw)?;
    let arms = keys.iter().map(|(operation_id, key)| {
        // progenitor names the operation in its hooks by its method's name.
        let operation_id = crate::model::operation::method_name(operation_id);
        let key = match key {
            Key::Header(name) => quote!(retry::Key::Header(#name)),
            Key::Body(name) => quote!(retry::Key::Body(#name)),
        };
        quote!(#operation_id => Some(#key),)
    });
    let (field, setter, from) = match credentials {
        false => (quote!(), quote!(), quote!()),
        true => (
            quote! {
                /// What the client proves who it is with.
                pub credentials: Credentials,
            },
            quote! {
                /// The credentials to send.
                pub fn credentials(mut self, credentials: Credentials) -> Self {
                    self.credentials = credentials;
                    self
                }
            },
            quote! {
                impl From<Credentials> for Config {
                    fn from(credentials: Credentials) -> Self {
                        Self::new().credentials(credentials)
                    }
                }
            },
        ),
    };
    Ok(quote! {
        /// Retries: [`retry::RetryPolicy`] (when and how often), [`retry::RetryBudget`] (how many
        /// a client may make in all) and [`retry::Key`] (an operation's idempotency key).
        pub use openapi_workspace_runtime::client::retry;

        /// A client's per-call options: each attempt's timeout, headers of the caller's.
        pub use openapi_workspace_runtime::client::options;

        /// How the client sends: the credentials it gives, the retries it makes
        /// (`RetryPolicy::default()`, on: see the README), each attempt's timeout and headers
        /// of the caller's.
        #[derive(Clone, Debug, Default)]
        pub struct Config {
            #field
            /// The retry policy, and the budget the client and its clones share.
            pub retries: retry::Retries,
            /// The timeout and headers put on every request.
            pub options: options::CallOptions,
        }

        impl Config {
            /// No credentials, the default retry policy and a budget of its own.
            pub fn new() -> Self {
                Self::default()
            }
            #setter
            /// The retry policy (`RetryPolicy::none()` turns retries off).
            pub fn retry(mut self, policy: retry::RetryPolicy) -> Self {
                self.retries.policy = policy;
                self
            }
            /// The retry budget (`RetryBudget::unlimited()` lifts it).
            pub fn retry_budget(mut self, budget: retry::RetryBudget) -> Self {
                self.retries.budget = budget;
                self
            }
            /// Each attempt's timeout, from sending to the answer's last byte (15 s unless set:
            /// see the README); the retry policy's deadline bounds all attempts together.
            pub fn timeout(mut self, timeout: ::std::time::Duration) -> Self {
                self.options.set_timeout(timeout);
                self
            }
            /// A header every request carries, replacing one of that name the operation sends.
            pub fn header(mut self, name: reqwest::header::HeaderName, value: reqwest::header::HeaderValue) -> Self {
                self.options.set_header(name, value);
                self
            }
        }

        #from

        impl Client {
            /// This client with another retry policy — for one call, or a few — sharing its
            /// connections and its retry budget.
            pub fn with_retry(&self, policy: retry::RetryPolicy) -> Self {
                let mut client = self.clone();
                client.inner.retries.policy = policy;
                client
            }

            /// This client with another timeout for each attempt — for one call, or a few.
            pub fn with_timeout(&self, timeout: ::std::time::Duration) -> Self {
                let mut client = self.clone();
                client.inner.options.set_timeout(timeout);
                client
            }

            /// This client sending one more header (replacing one of that name the operation
            /// sends) — for one call, or a few: a trace id, a tenant.
            pub fn with_header(&self, name: reqwest::header::HeaderName, value: reqwest::header::HeaderValue) -> Self {
                let mut client = self.clone();
                client.inner.options.set_header(name, value);
                client
            }
        }

        /// Where an operation's idempotency key is, as the document says: what lets a `POST`
        /// or `PATCH` be sent again.
        fn idempotency_key(operation_id: &str) -> Option<retry::Key> {
            match operation_id {
                #(#arms)*
                _ => None,
            }
        }
    })
}

/// The hook's parts: `pre` fills a header key the caller left out (once per call, so every
/// attempt carries the same); `exec` sends through the retry loop, with the client's
/// `credentials` (when it holds any) put on each attempt.
pub(crate) fn hooks(credentials: bool) -> (TokenStream, TokenStream) {
    let authorize = match credentials {
        true => quote!(&self.inner.credentials),
        false => quote!(&()),
    };
    let pre = quote! {
        self.inner.options.apply(request);
        if let Some(key) = idempotency_key(info.operation_id) {
            key.fill(request);
        }
    };
    let exec = quote! {
        async fn exec(
            &self,
            request: reqwest::Request,
            info: &OperationInfo,
        ) -> reqwest::Result<reqwest::Response> {
            let key = idempotency_key(info.operation_id);
            self.inner.retries.execute(&self.client, request, info.operation_id, key, #authorize).await
        }
    };
    (pre, exec)
}

//! Server-sent events on the client. progenitor answers an operation whose response is
//! `text/event-stream` with the response's bytes; for each such operation the client gains
//! `{operation}_events`, a stream of the document's event type (`runtime/client_events.rs`,
//! copied into the client), which reconnects with `Last-Event-ID` when the operation takes it.
//! The server's side is the server model's `ReplyBody::Events` and the runtime's `events`.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::Result;
use crate::server::model::{ReplyBody, Status};
use crate::spec::Spec;

/// The client's event streams; `None` when no operation answers events.
pub fn client(spec: &Spec, type_names: &BTreeSet<String>) -> Result<Option<TokenStream>> {
    let schemes = crate::server::security::schemes(&spec.openapi)?;
    let ops = crate::server::model::operations(spec, type_names, &schemes)?;
    let mut methods = Vec::new();
    for op in &ops {
        let item = op.replies.iter().find_map(|reply| match (&reply.body, reply.status) {
            (Some(ReplyBody::Events(item)), Status::Code(200..=299) | Status::Range(2)) => Some(item),
            _ => None,
        });
        let Some(item) = item else { continue };
        let resume = op.header_params.iter().find(|p| p.name == "last-event-id");
        let (method, builder) = (&op.fn_name, format_ident!("{}", op.type_name));
        let events = format_ident!("{}_events", op.fn_name.to_string().trim_start_matches("r#"));
        let resumable = resume.is_some();
        let set_last = resume.map(|p| {
            let setter = &p.ident;
            quote! {
                let builder = match last_event_id {
                    Some(id) => builder.#setter(id),
                    None => builder,
                };
            }
        });
        let unused = resume.is_none().then(|| quote!(let _ = last_event_id;));
        let doc = format!(
            " The events of [`Client::{method}`], each read as the document's event type. `request` sets the\n \
             operation's parameters, as on its builder.{}",
            if resumable {
                "\n\n When the connection ends, the request is made again with `Last-Event-ID` set to the\n \
                 last event's id, so nothing is lost or repeated, until the server answers `204`."
            } else {
                "\n\n The operation takes no `Last-Event-ID`: the stream ends with the response."
            }
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #events<'a>(
                &'a self,
                request: impl Fn(builder::#builder<'a>) -> builder::#builder<'a> + 'a,
            ) -> impl futures::Stream<Item = Result<events::Event<#item>, Error<impl std::fmt::Debug + 'a>>> + 'a {
                events::stream(
                    move |last_event_id: Option<String>| {
                        let builder = request(self.#method());
                        #set_last
                        #unused
                        builder.send()
                    },
                    #resumable,
                )
            }
        });
    }
    if methods.is_empty() {
        return Ok(None);
    }
    let runtime: TokenStream = include_str!("../runtime/client_events.rs").parse().expect("the client's events parse");
    Ok(Some(quote! {
        #runtime

        impl Client {
            #(#methods)*
        }
    }))
}

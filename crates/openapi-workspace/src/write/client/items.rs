//! Streamed items: OpenAPI 3.2's `itemSchema` on JSON Lines (`application/jsonl`,
//! `application/x-ndjson`, `application/x-jsonlines`) and JSON text sequences
//! (`application/json-seq`). The 3.1 view (`openapi32`) makes the item schema the media type's
//! `schema`, marked with [`EXTENSION`]; the server answers an `ItemStream` of the item type
//! (the server runtime's `items`), the client gains `{operation}_items`, a stream of them
//! (the runtime's `client::items`). Only responses stream: a request body
//! of items is refused with its pointer (`model::operations`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::operation::{Op, ReplyBody, Status};

/// The client's item streams; `None` when no operation answers items.
pub(crate) fn client(ops: &[Op]) -> Option<TokenStream> {
    let mut methods = Vec::new();
    for op in ops {
        let item = op.replies.iter().find_map(|reply| match (&reply.body, reply.status) {
            (Some(ReplyBody::Items { item, .. }), Status::Code(200..=299) | Status::Range(2)) => Some(item),
            _ => None,
        });
        let Some(item) = item else { continue };
        let (method, builder) = (&op.fn_name, format_ident!("{}", op.type_name));
        let items = format_ident!("{}_items", op.fn_name.to_string().trim_start_matches("r#"));
        let doc = format!(
            " The items of [`Client::{method}`], each read as the document's item type as it arrives.\n \
             `request` sets the operation's parameters, as on its builder. The stream ends with the\n \
             response, with an error if it broke off or an item is not of the type."
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #items<'a>(
                &'a self,
                request: impl FnOnce(builder::#builder<'a>) -> builder::#builder<'a>,
            ) -> impl futures::Stream<Item = Result<#item, Error<impl std::fmt::Debug + 'a>>> + 'a {
                items::stream(request(self.#method()).send())
            }
        });
    }
    if methods.is_empty() {
        return None;
    }
    Some(quote! {
        pub use openapi_workspace_runtime::client::items;

        impl Client {
            #(#methods)*
        }
    })
}

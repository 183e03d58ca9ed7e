//! The pagination sample (`samples/pagination.yaml`) served over real HTTP: one list of 25 things
//! paged each way real APIs page (Stripe's `starting_after` with `has_more`, ours without it, a
//! cursor field, Slack's nested one, GitHub's `Link` header, an offset, page numbers from 0, and a
//! scheme only `x-pagination` names), each read whole through the generated client's
//! `{operation}_stream`: every item once, in order — with a page that fails once retried inside
//! the stream.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{StreamExt, TryStreamExt};
use openapi_workspace_output::pagination::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};

const COUNT: usize = 25;
const PAGE: usize = 10;

struct Service {
    /// Requests for the page after `t09` that are refused with 503 before one is answered.
    refusals: AtomicUsize,
    requests: AtomicUsize,
}

fn thing(i: usize) -> types::Thing {
    types::Thing { id: format!("t{i:02}") }
}

fn entry(i: usize) -> types::Entry {
    types::Entry { id: uuid::Uuid::from_u128(i as u128 + 1) }
}

/// The things from `start`, at most `size`; and where the next page would start.
fn page(start: usize, size: usize) -> (Vec<types::Thing>, usize) {
    let end = (start + size).min(COUNT);
    ((start.min(end)..end).map(thing).collect(), end)
}

/// Where the item after the one of this id is.
fn after(id: Option<&str>) -> usize {
    id.map_or(0, |id| (0..COUNT).position(|i| thing(i).id == id).map_or(COUNT, |i| i + 1))
}

fn number(text: Option<&String>) -> usize {
    text.map_or(0, |t| t.parse().unwrap())
}

impl server::Api<()> for Service {
    async fn list_after(
        &self,
        _: RequestContext<()>,
        query: server::ListAfterQuery,
    ) -> Result<server::ListAfterResponse, ApiError> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let from = after(query.starting_after.as_deref());
        if from == PAGE && self.refusals.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
        {
            // The document's error object: an `ApiError` writes it (`{"message":"busy"}`).
            return Err(ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy"));
        }
        let (data, end) = page(from, query.limit.map_or(PAGE, |l| l as usize));
        Ok(server::ListAfterResponse::Ok(types::ListAfterResponse {
            data,
            has_more: end < COUNT,
            object: Some("list".into()),
        }))
    }

    async fn list_plain(
        &self,
        _: RequestContext<()>,
        query: server::ListPlainQuery,
    ) -> Result<server::ListPlainResponse, ApiError> {
        let from = query.starting_after.map_or(0, |id| (0..COUNT).position(|i| entry(i).id == id).unwrap() + 1);
        let end = (from + PAGE).min(COUNT);
        Ok(server::ListPlainResponse::Ok((from..end).map(entry).collect()))
    }

    async fn list_cursor(
        &self,
        _: RequestContext<()>,
        query: server::ListCursorQuery,
    ) -> Result<server::ListCursorResponse, ApiError> {
        let (items, end) = page(number(query.cursor.as_ref()), PAGE);
        let next_cursor = (end < COUNT).then(|| end.to_string());
        Ok(server::ListCursorResponse::Ok(types::ListCursorResponse { items, next_cursor }))
    }

    async fn list_nested(
        &self,
        _: RequestContext<()>,
        query: server::ListNestedQuery,
    ) -> Result<server::ListNestedResponse, ApiError> {
        let (members, end) = page(number(query.cursor.as_ref()), PAGE);
        // Slack's last page says so with an empty cursor.
        let next_cursor = Some(if end < COUNT { end.to_string() } else { String::new() });
        Ok(server::ListNestedResponse::Ok(types::ListNestedResponse {
            members,
            response_metadata: Some(types::ListNestedResponseResponseMetadata { next_cursor }),
        }))
    }

    async fn list_linked(
        &self,
        _: RequestContext<()>,
        query: server::ListLinkedQuery,
    ) -> Result<server::ListLinkedResponse, ApiError> {
        let size = query.per_page as usize;
        let (body, end) = page((query.page as usize - 1) * size, size);
        let next = query.page + 1;
        let link = (end < COUNT).then(|| {
            format!(
                "<https://api.example.com/linked?page=1&per_page={size}>; rel=\"first\", \
                 <https://api.example.com/linked?per_page={size}&page={next}>; rel=\"next\""
            )
        });
        Ok(server::ListLinkedResponse::Ok { body, link })
    }

    async fn list_offset(
        &self,
        _: RequestContext<()>,
        query: server::ListOffsetQuery,
    ) -> Result<server::ListOffsetResponse, ApiError> {
        let (results, _) = page(query.offset.unwrap_or(0) as usize, query.limit.map_or(PAGE, |l| l as usize));
        Ok(server::ListOffsetResponse::Ok(types::ListOffsetResponse { results, total: Some(COUNT as i64) }))
    }

    async fn list_numbered(
        &self,
        _: RequestContext<()>,
        query: server::ListNumberedQuery,
    ) -> Result<server::ListNumberedResponse, ApiError> {
        let (things, _) = page(query.page.unwrap_or(0) as usize * PAGE, PAGE);
        Ok(server::ListNumberedResponse::Ok(things))
    }

    async fn list_declared(
        &self,
        _: RequestContext<()>,
        query: server::ListDeclaredQuery,
    ) -> Result<server::ListDeclaredResponse, ApiError> {
        let (things, end) = page(number(query.from.as_ref()), PAGE);
        let continue_from = (end < COUNT).then(|| end.to_string());
        Ok(server::ListDeclaredResponse::Ok(types::ListDeclaredResponse { things, continue_from }))
    }
}

fn ids(things: Vec<types::Thing>) -> Vec<String> {
    things.into_iter().map(|t| t.id).collect()
}

#[tokio::test]
async fn every_scheme_is_read_whole_every_item_once_in_order() {
    let service = Arc::new(Service { refusals: AtomicUsize::new(1), requests: AtomicUsize::new(0) });
    let url = support::serve(server::router(service.clone())).await;
    let client = client::Client::new(&url, client::Config::new());
    let all: Vec<String> = (0..COUNT).map(|i| thing(i).id).collect();

    // Stripe's: the second page is refused once with 503, retried inside the stream.
    let read = client.list_after_stream(|request| request).try_collect().await.unwrap();
    assert_eq!(ids(read), all, "after");
    assert_eq!(service.requests.load(Ordering::SeqCst), 4, "three pages, the second asked twice");
    let read = client.list_after_stream(|request| request.limit(7)).try_collect().await.unwrap();
    assert_eq!(ids(read), all, "after, pages of 7");

    let entries: Vec<types::Entry> = client.list_plain_stream(|request| request).try_collect().await.unwrap();
    assert_eq!(entries, (0..COUNT).map(entry).collect::<Vec<_>>(), "plain");

    for (scheme, read) in [
        ("cursor", client.list_cursor_stream(|r| r).try_collect().await),
        ("nested", client.list_nested_stream(|r| r).try_collect().await),
        ("linked", client.list_linked_stream(|r| r.per_page(7)).try_collect().await),
        ("offset", client.list_offset_stream(|r| r).try_collect().await),
        ("numbered", client.list_numbered_stream(|r| r).try_collect().await),
        ("declared", client.list_declared_stream(|r| r).try_collect().await),
    ] {
        assert_eq!(ids(read.unwrap()), all, "{scheme}");
    }
}

#[tokio::test]
async fn pages_are_streamed_as_answered_and_a_page_that_fails_ends_the_stream_with_its_error() {
    let service = Arc::new(Service { refusals: AtomicUsize::new(usize::MAX), requests: AtomicUsize::new(0) });
    let url = support::serve(server::router(service.clone())).await;
    // No retries: the refused page is the stream's last item, its error.
    let client = client::Client::new(&url, client::Config::new().retry(client::retry::RetryPolicy::none()));

    let linked: Vec<_> = client.list_linked_pages(|r| r.per_page(10)).try_collect().await.unwrap();
    let sizes: Vec<usize> = linked.iter().map(|page| page.len()).collect();
    assert_eq!(sizes, [10, 10, 5]);

    let pages: Vec<_> = client.list_after_pages(|r| r).collect().await;
    assert_eq!(pages.len(), 2, "the first page, then the refusal: {pages:?}");
    assert_eq!(ids(pages[0].as_ref().unwrap().data.clone()), ids((0..PAGE).map(thing).collect()));
    match &pages[1] {
        Err(client::Error::ErrorResponse(refused)) => assert_eq!(refused.status().as_u16(), 503),
        other => panic!("{other:?}"),
    }
}

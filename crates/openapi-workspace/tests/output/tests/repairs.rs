//! The repaired sample (`samples/repairs.yaml`) served over real HTTP through its generated
//! client: the path parameter the document forgot is there, the one it named wrongly is gone,
//! the parameter without a schema is a string, the integer default written as text applies, the
//! default outside its enum no longer claims a value, and the security scheme the document
//! never defined is dropped without leaving the operation open to anyone.

mod support;

use std::sync::Arc;

use openapi_workspace_output::repairs::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct Service;

impl server::Api<()> for Service {
    async fn authenticate(&self, credentials: &[server::Credential<'_>]) -> Result<(), ApiError> {
        match credentials {
            [server::Credential::Token("tok")] => Ok(()),
            _ => Err(ApiError::unauthorized()),
        }
    }

    async fn get_book(
        &self,
        _: RequestContext<()>,
        shelf: i64,
        book: String,
        query: server::GetBookQuery,
    ) -> Result<server::GetBookResponse, ApiError> {
        Ok(server::GetBookResponse::Ok(types::Book {
            shelf,
            book,
            lang: query.lang,
            limit: Some(query.limit),
            rating: Some(4.5),
            sort: query.sort.map(|s| s.to_string()),
        }))
    }
}

#[tokio::test]
async fn the_repaired_document_is_served_as_its_author_meant_it() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    let client = client::Client::new(&url, client::Credentials::new().token("tok").into());

    let book = client.get_book().shelf(3).book("dune").lang("en").send().await.unwrap().into_inner();
    assert_eq!(
        (book.shelf, book.book.as_str(), book.lang.as_deref(), book.limit, book.sort.as_deref()),
        (3, "dune", Some("en"), Some(10), None),
        "limit's default \"10\" read as 10; sort's default (outside its enum) dropped"
    );
    let sorted = client.get_book().shelf(3).book("dune").sort(types::GetBookSort::Year).limit(2).send().await.unwrap();
    assert_eq!((sorted.limit, sorted.sort.as_deref()), (Some(2), Some("year")));

    // The alternative that asked only for the undefined scheme is gone, not anonymous: no
    // credential, no book.
    let http = reqwest::Client::new();
    let anonymous = http.get(format!("{url}/shelves/3/books/dune")).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);

    // The repaired parameters are checked as written: the shelf is an integer, sort one of its values.
    for (path, status) in [
        ("/shelves/x/books/dune", 400),
        ("/shelves/3/books/dune?sort=author", 400),
        ("/shelves/3/books/dune?offset=none", 400),
        ("/shelves/3/books/dune?offset=5", 200),
    ] {
        let response = http.get(format!("{url}{path}")).bearer_auth("tok").send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
    }
}

//! An answer written once and answered many times: each operation's response enum has a
//! `Prepared` variant holding one, for answers that are the same every time (reference data, a
//! configuration), so they are not serialized again for each request.

use std::fmt;
use std::marker::PhantomData;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// `R`'s answer as it goes out: status, headers and body, written once by [`Prepared::new`].
/// Answering it copies a reference to the body, not the body. Only an `R` makes one, so an
/// operation answers only what its own response enum could.
pub struct Prepared<R> {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    of: PhantomData<fn() -> R>,
}

impl<R: IntoResponse> Prepared<R> {
    /// `response` written as it would be answered (a streamed body read to its end).
    pub async fn new(response: R) -> Result<Self, axum::Error> {
        let (parts, body) = response.into_response().into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await?;
        Ok(Self { status: parts.status, headers: parts.headers, body, of: PhantomData })
    }
}

impl<R> Prepared<R> {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

impl<R> IntoResponse for Prepared<R> {
    fn into_response(self) -> Response {
        let mut response = Response::new(Body::from(self.body));
        *response.status_mut() = self.status;
        *response.headers_mut() = self.headers;
        response
    }
}

// By hand: derived, they would ask the same of `R`, which only names the answer.
impl<R> Clone for Prepared<R> {
    fn clone(&self) -> Self {
        Self { status: self.status, headers: self.headers.clone(), body: self.body.clone(), of: PhantomData }
    }
}

impl<R> PartialEq for Prepared<R> {
    fn eq(&self, other: &Self) -> bool {
        (self.status, &self.headers, &self.body) == (other.status, &other.headers, &other.body)
    }
}

impl<R> fmt::Debug for Prepared<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &self.body)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Prepared;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    #[tokio::test]
    async fn a_prepared_answer_is_the_answer_it_was_made_from() {
        let made = || (StatusCode::CREATED, [("x-kind", "pet")], "{\"name\":\"Rex\"}");
        let prepared = Prepared::new(made()).await.unwrap();
        assert_eq!(prepared.status(), StatusCode::CREATED);
        assert_eq!(prepared.clone(), prepared);
        for answered in [prepared.clone().into_response(), prepared.into_response()] {
            let expected = made().into_response();
            assert_eq!(answered.status(), expected.status());
            assert_eq!(answered.headers(), expected.headers());
            let body = axum::body::to_bytes(answered.into_body(), usize::MAX).await.unwrap();
            assert_eq!(body, "{\"name\":\"Rex\"}");
        }
    }
}

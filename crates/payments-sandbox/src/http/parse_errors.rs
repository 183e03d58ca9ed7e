//! The error object for requests hyper refuses before the application sees them.
//!
//! A request line or header hyper cannot parse (a malformed header, a negative
//! `Content-Length`), a URI it cannot hold, or a head over the size limit never becomes a
//! request: hyper answers it itself, with `400`, `414` or `431` and an empty body, and closes
//! the connection. hyper has no hook for that answer, so this wrapper around the socket
//! recognises it on its way out and writes the same status with the error object instead.
//!
//! It recognises it safely: every `4xx` the application sends carries the error object
//! (`payments_server::runtime` makes sure), so a `4xx` head with `content-length: 0` and no
//! body can only be hyper's own.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::http::StatusCode;
use payments_server::ApiError;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose automatic error answers get the error object.
pub(super) struct ErrorBodies<T> {
    inner: T,
    /// A rewritten answer not yet written to `inner`.
    pending: Vec<u8>,
}

impl<T> ErrorBodies<T> {
    pub(super) fn new(inner: T) -> Self {
        Self { inner, pending: Vec::new() }
    }
}

impl<T: AsyncWrite + Unpin> ErrorBodies<T> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ErrorBodies<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ErrorBodies<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(answer) = with_error_object(buf) {
            // Taken whole: it is written out before anything else (and at the flush hyper
            // does after every answer).
            self.pending = answer;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        let mut filled = bufs.iter().filter(|buf| !buf.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next())
            && let Some(answer) = with_error_object(only)
        {
            self.pending = answer;
            return Poll::Ready(Ok(only.len()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// `written` with the error object as its body, when it is a whole `4xx` answer without one.
fn with_error_object(written: &[u8]) -> Option<Vec<u8>> {
    let head = written.strip_suffix(b"\r\n\r\n")?;
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let code = status_line.strip_prefix("HTTP/1.1 ").or_else(|| status_line.strip_prefix("HTTP/1.0 "))?.get(..3)?;
    let status = StatusCode::from_bytes(code.as_bytes()).ok().filter(StatusCode::is_client_error)?;
    let headers: Vec<&str> = lines.collect();
    if !headers.iter().any(|line| line.eq_ignore_ascii_case("content-length: 0")) {
        return None;
    }
    let message = match status {
        StatusCode::BAD_REQUEST => {
            "Invalid request: the request line or a header could not be parsed as HTTP/1.1 (RFC 9112)".to_owned()
        }
        StatusCode::URI_TOO_LONG => "URI too long".to_owned(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => format!(
            "Request headers too large: at most {} headers and {} bytes of request line and headers",
            MAX_HEADERS,
            super::request_limits::MAX_HEAD
        ),
        other => other.canonical_reason().unwrap_or("Error").to_owned(),
    };
    let body = payments_server::ERROR_OBJECT.body(&ApiError::new(status, message));
    let mut answer = format!("{status_line}\r\n");
    for line in headers.iter().filter(|line| !line.to_ascii_lowercase().starts_with("content-length:")) {
        answer.push_str(line);
        answer.push_str("\r\n");
    }
    answer.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n", body.len()));
    if !headers.iter().any(|line| line.to_ascii_lowercase().starts_with("connection:")) {
        answer.push_str("connection: close\r\n");
    }
    answer.push_str("\r\n");
    let mut answer = answer.into_bytes();
    answer.extend_from_slice(&body);
    Some(answer)
}

/// hyper's limit on the number of request headers (its default).
const MAX_HEADERS: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_client_error_gets_the_error_object() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n";
        let answer = String::from_utf8(with_error_object(hyper).unwrap()).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "{head}");
        assert!(head.contains("\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT"), "{head}");
        assert!(head.contains(&format!("\r\ncontent-length: {}", body.len())), "{head}");
        assert!(head.contains("\r\nconnection: close"), "{head}");
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["request"], "error");
        assert_eq!(body["code"], 431);
    }

    #[test]
    fn answers_with_a_body_or_of_another_class_pass_unchanged() {
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(with_error_object(with_body), None);
        let head_only = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 57\r\n\r\n";
        assert_eq!(with_error_object(head_only), None);
        assert_eq!(with_error_object(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"), None);
        assert_eq!(with_error_object(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n"), None);
    }
}

//! The generated server of `samples/multipart.yaml`, serving uploads for `cargo xtask bench`'s
//! upload memory figure: it reads each uploaded file back to its end (as an implementation that
//! stores it elsewhere would) and answers the receipt. Prints its address, then serves until
//! killed. `upload-server [PORT]`.

use std::sync::Arc;

use openapi_workspace_output::multipart::{server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use tokio::io::AsyncReadExt;

struct Drain;

impl server::Api for Drain {
    async fn upload_document(
        &self,
        _: RequestContext<()>,
        body: server::UploadDocumentParts,
    ) -> Result<server::UploadDocumentResponse, ApiError> {
        let (name, content_type, size) = (body.file.file_name.clone(), body.file.content_type.clone(), body.file.size);
        let mut reader = body.file.into_reader();
        let mut chunk = vec![0; 64 * 1024];
        let mut first = Vec::new();
        loop {
            let read = reader.read(&mut chunk).await.map_err(|_| ApiError::internal())?;
            if read == 0 {
                break;
            }
            if first.len() < 16 {
                first.extend_from_slice(&chunk[..read.min(16 - first.len())]);
            }
        }
        let text = String::from_utf8_lossy(&first).into_owned();
        let file = types::Received { name, content_type, size: size as i64, text };
        let receipt = types::Receipt {
            title: body.title,
            pages: None,
            tags: Vec::new(),
            meta: None,
            file,
            attachments: Vec::new(),
        };
        Ok(server::UploadDocumentResponse::Created { body: receipt, location: "/documents/1".to_owned() })
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("{}", listener.local_addr()?);
    axum::serve(listener, server::router(Arc::new(Drain))).await
}

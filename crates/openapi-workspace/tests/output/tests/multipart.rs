//! A `multipart/form-data` body (`samples/multipart.yaml`) over real HTTP: the generated client
//! encodes the parts struct (files streamed), the generated server hands the operation the
//! parts typed and validated, files in temporary files; what breaks the document or the limits
//! is refused with the error object before the operation runs.

mod support;

use std::sync::Arc;

use openapi_workspace_output::multipart::{client, server, types};
use openapi_workspace_runtime::multipart::{File, MAX_FIELD, MAX_PARTS};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct Store;

async fn received(file: File) -> types::Received {
    let (name, content_type, size) = (file.file_name.clone(), file.content_type.clone(), file.size);
    let bytes = file.bytes().await.unwrap();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(16)]).into_owned();
    types::Received { name, content_type, size: size as i64, text }
}

impl server::Api for Store {
    async fn upload_document(
        &self,
        _: RequestContext<()>,
        body: server::UploadDocumentParts,
    ) -> Result<server::UploadDocumentResponse, ApiError> {
        let mut attachments = Vec::new();
        for file in body.attachments {
            attachments.push(received(file).await);
        }
        let receipt = types::Receipt {
            title: body.title,
            pages: body.pages,
            tags: body.tags.unwrap_or_default(),
            meta: body.meta,
            file: received(body.file).await,
            attachments,
        };
        Ok(server::UploadDocumentResponse::Created { body: receipt, location: "/documents/1".to_owned() })
    }
}

#[tokio::test]
async fn the_client_sends_the_parts_and_the_server_reads_them_typed() {
    let url = support::serve(server::router(Arc::new(Store))).await;
    let client = client::Client::new(&url, client::Config::new());

    // A file of 3 MiB, streamed in chunks: well past the 64 KiB every other body is held to.
    let chunks = (0..48).map(|i| Ok::<_, std::io::Error>(vec![b'a' + (i % 26) as u8; 64 * 1024]));
    let receipt = client
        .upload_document()
        .parts(client::UploadDocumentParts {
            title: "Terms \"2026\"".to_owned(),
            pages: Some(12),
            tags: Some(vec!["legal".to_owned(), "v2".to_owned()]),
            meta: Some(types::Meta { author: "Ada".to_owned(), draft: Some(true) }),
            file: client::multipart::Upload::stream(futures::stream::iter(chunks))
                .file_name("terms.pdf")
                .content_type("application/pdf"),
            attachments: vec![
                client::multipart::Upload::bytes(b"first attachment".to_vec()).file_name("a.txt"),
                client::multipart::Upload::bytes(Vec::new()),
            ],
        })
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(receipt.title, "Terms \"2026\"");
    assert_eq!((receipt.pages, receipt.tags.clone()), (Some(12), vec!["legal".to_owned(), "v2".to_owned()]));
    assert_eq!(receipt.meta, Some(types::Meta { author: "Ada".to_owned(), draft: Some(true) }));
    assert_eq!(receipt.file.size, 48 * 64 * 1024);
    assert_eq!(receipt.file.text, "a".repeat(16));
    assert_eq!(
        (receipt.file.name.as_deref(), receipt.file.content_type.as_deref()),
        (Some("terms.pdf"), Some("application/pdf"))
    );
    let attachments: Vec<(Option<&str>, i64, &str)> =
        receipt.attachments.iter().map(|a| (a.name.as_deref(), a.size, a.text.as_str())).collect();
    assert_eq!(attachments, [(Some("a.txt"), 16, "first attachment"), (Some(""), 0, "")]);
}

/// A part written by hand: its name, its file name and content type if a file, its contents.
type HandPart<'a> = (&'a str, Option<(&'a str, &'a str)>, &'a str);

/// A body written by hand, part by part.
fn body(parts: &[HandPart<'_>]) -> (String, Vec<u8>) {
    let boundary = "XyZzY";
    let mut body = Vec::new();
    for (name, file, contents) in parts {
        body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"").bytes());
        if let Some((file_name, content_type)) = file {
            body.extend(format!("; filename=\"{file_name}\"\r\nContent-Type: {content_type}").bytes());
        }
        body.extend(format!("\r\n\r\n{contents}\r\n").bytes());
    }
    body.extend(format!("--{boundary}--\r\n").bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test]
async fn what_breaks_the_document_or_the_limits_is_refused() {
    let url = support::serve(server::router(Arc::new(Store))).await;
    let http = reqwest::Client::new();
    let post = |(content_type, body): (String, Vec<u8>)| {
        http.post(format!("{url}/documents")).header("content-type", content_type).body(body).send()
    };
    let pdf = Some(("d.pdf", "application/pdf"));
    let big = "x".repeat(MAX_FIELD + 1);
    let many: Vec<HandPart<'_>> = (0..=MAX_PARTS).map(|_| ("tags", None, "t")).collect();
    for (parts, status, says) in [
        (vec![("title", None, "t")], 400, "part `file` (a file) is required"),
        (vec![("file", pdf, "%PDF")], 400, "title"),
        (vec![("title", None, &"t".repeat(41)[..]), ("file", pdf, "%PDF")], 400, "title"),
        (vec![("title", None, "t"), ("pages", None, "0"), ("file", pdf, "%PDF")], 400, "pages"),
        (vec![("title", None, "t"), ("pages", None, "many"), ("file", pdf, "%PDF")], 400, "pages"),
        (vec![("title", None, "t"), ("meta", None, "{\"draft\": true}"), ("file", pdf, "%PDF")], 400, "author"),
        (vec![("title", None, "t"), ("meta", None, "not json"), ("file", pdf, "%PDF")], 400, "not JSON"),
        (
            vec![("title", None, "t"), ("file", Some(("d.exe", "application/x-msdownload")), "MZ")],
            400,
            "application/pdf or text/plain",
        ),
        (vec![("title", None, "t"), ("title", None, "u"), ("file", pdf, "%PDF")], 400, "more than once"),
        (vec![("title", None, "t"), ("colour", None, "red"), ("file", pdf, "%PDF")], 400, "`colour` is not one"),
        (vec![("title", None, &big[..]), ("file", pdf, "%PDF")], 413, "only files may be larger"),
        (many, 413, "at most"),
    ] {
        let response = post(body(&parts)).await.unwrap();
        let status_was = response.status().as_u16();
        let read: serde_json::Value = response.json().await.unwrap();
        assert_eq!(status_was, status, "{says}: {read}");
        // The document declares no error object: RFC 9457 problem details.
        assert_eq!(read["status"], status, "{read}");
        assert!(read["detail"].as_str().unwrap().contains(says), "{says:?} not in {read}");
    }
    // Not multipart at all, or no boundary.
    let response = http
        .post(format!("{url}/documents"))
        .header("content-type", "multipart/form-data")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 415);
    // A body that ends before its closing boundary.
    let (content_type, mut cut) = body(&[("title", None, "t"), ("file", pdf, "%PDF")]);
    cut.truncate(cut.len() - 12);
    let response = post((content_type, cut)).await.unwrap();
    assert_eq!(response.status().as_u16(), 400);
}

/// The mock answers an upload with its documented `201`, the required `Location` header set to the
/// header's example.
#[tokio::test]
async fn the_mock_answers_with_the_required_headers() {
    let url = support::serve(server::mock_router(Arc::new(server::MockApi))).await;
    let (content_type, body) = body(&[("title", None, "t"), ("file", Some(("d.pdf", "application/pdf")), "%PDF")]);
    let response = reqwest::Client::new()
        .post(format!("{url}/documents"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    assert_eq!(response.headers()["location"], "/documents/1");
}

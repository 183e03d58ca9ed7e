//! The security sample (`samples/security.yaml`) served over real HTTP: every scheme kind the
//! router checks (bearer, basic, an api key in a header, a query parameter or a cookie, oauth2's
//! bearer token) accepted and refused as each operation's requirements say — alternatives,
//! schemes required together, an anonymous alternative, an open operation — and the generated
//! client, configured with a credential per scheme, sending each operation what it asks for.

mod support;

use std::sync::Arc;

use openapi_workspace_output::security::{client, server};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct Service;

/// The caller, as the credentials presented name it: `scheme:value` joined by `+`.
impl server::Api<String> for Service {
    async fn authenticate(&self, credentials: &[server::Credential<'_>]) -> Result<String, ApiError> {
        use server::Credential::*;
        let mut caller = Vec::new();
        for credential in credentials {
            caller.push(match credential {
                Bearer("tok") => "bearer:tok".to_owned(),
                Oauth("otok") => "oauth:otok".to_owned(),
                HeaderKey("hk") => "headerKey:hk".to_owned(),
                QueryKey(key) if key == "qk" => "queryKey:qk".to_owned(),
                CookieKey("ck") => "cookieKey:ck".to_owned(),
                Basic { username, password } if username == "ada" && password == "se:cret" => "basic:ada".to_owned(),
                _ => return Err(ApiError::unauthorized()),
            });
        }
        Ok(caller.join("+"))
    }

    /// Open to anyone, but for a caller who asks to be refused: an implementation's own `401`,
    /// from outside the router's authentication.
    async fn open(&self, c: RequestContext<()>) -> Result<server::OpenResponse, ApiError> {
        if c.headers.contains_key("x-refuse-me") {
            return Err(ApiError::unauthorized());
        }
        Ok(server::OpenResponse::Ok("anyone".into()))
    }
    async fn with_bearer(&self, c: RequestContext<String>) -> Result<server::WithBearerResponse, ApiError> {
        Ok(server::WithBearerResponse::Ok(c.caller))
    }
    async fn with_header_key(&self, c: RequestContext<String>) -> Result<server::WithHeaderKeyResponse, ApiError> {
        Ok(server::WithHeaderKeyResponse::Ok(c.caller))
    }
    async fn with_query_key(
        &self,
        c: RequestContext<String>,
        query: server::WithQueryKeyQuery,
    ) -> Result<server::WithQueryKeyResponse, ApiError> {
        Ok(server::WithQueryKeyResponse::Ok(format!("{} page {:?}", c.caller, query.page)))
    }
    async fn with_cookie_key(&self, c: RequestContext<String>) -> Result<server::WithCookieKeyResponse, ApiError> {
        Ok(server::WithCookieKeyResponse::Ok(c.caller))
    }
    async fn with_basic(&self, c: RequestContext<String>) -> Result<server::WithBasicResponse, ApiError> {
        Ok(server::WithBasicResponse::Ok(c.caller))
    }
    async fn with_oauth(&self, c: RequestContext<String>) -> Result<server::WithOauthResponse, ApiError> {
        Ok(server::WithOauthResponse::Ok(c.caller))
    }
    async fn together(&self, c: RequestContext<String>) -> Result<server::TogetherResponse, ApiError> {
        Ok(server::TogetherResponse::Ok(c.caller))
    }
    async fn either(&self, c: RequestContext<String>) -> Result<server::EitherResponse, ApiError> {
        Ok(server::EitherResponse::Ok(c.caller))
    }
    async fn optional(&self, _: RequestContext<()>) -> Result<server::OptionalResponse, ApiError> {
        Ok(server::OptionalResponse::Ok("anyone".into()))
    }
}

async fn start() -> String {
    support::serve(server::router(Arc::new(Service))).await
}

/// Status, `WWW-Authenticate` and body of `request`.
async fn send(request: reqwest::RequestBuilder) -> (u16, String, serde_json::Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge =
        response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, challenge, response.json().await.unwrap())
}

#[tokio::test]
async fn each_operation_takes_what_its_requirements_name_and_refuses_the_rest() {
    let url = start().await;
    let http = reqwest::Client::new();
    let get = |path: &str| http.get(format!("{url}{path}"));
    let ok = |body: &str| (200, String::new(), serde_json::json!(body));

    assert_eq!(send(get("/open")).await, ok("anyone"));
    assert_eq!(send(get("/optional")).await, ok("anyone"), "an anonymous alternative");
    assert_eq!(send(get("/bearer").bearer_auth("tok")).await, ok("bearer:tok"));
    assert_eq!(send(get("/oauth").bearer_auth("otok")).await, ok("oauth:otok"));
    assert_eq!(send(get("/header-key").header("x-api-key", "hk")).await, ok("headerKey:hk"));
    assert_eq!(send(get("/query-key?api_key=qk&page=2")).await, ok("queryKey:qk page Some(2)"));
    assert_eq!(send(get("/cookie-key").header("cookie", "theme=dark; session=ck")).await, ok("cookieKey:ck"));
    assert_eq!(send(get("/basic").basic_auth("ada", Some("se:cret"))).await, ok("basic:ada"));
    let together = get("/together").header("x-api-key", "hk").basic_auth("ada", Some("se:cret"));
    // Schemes required together come in the order of their names.
    assert_eq!(send(together).await, ok("basic:ada+headerKey:hk"));
    assert_eq!(send(get("/either?api_key=qk")).await, ok("queryKey:qk"), "the second alternative");
    // The first alternative refused, the second met: the second.
    assert_eq!(send(get("/either?api_key=qk").basic_auth("ada", Some("wrong"))).await, ok("queryKey:qk"));

    // Refusals: 401, the error object, what to send, and the challenges.
    let refused = [
        (get("/bearer"), "Bearer realm=\"Security sample\"", "send Authorization: Bearer <token>"),
        (get("/bearer").bearer_auth("nope"), "Bearer realm=\"Security sample\"", "Missing or invalid credential"),
        (
            get("/header-key").header("x-api-key", "nope"),
            "ApiKey realm=\"Security sample\", header=\"x-api-key\"",
            "credential",
        ),
        (get("/query-key"), "ApiKey realm=\"Security sample\", query=\"api_key\"", "send the api_key query parameter"),
        (
            get("/cookie-key").header("cookie", "session=nope"),
            "ApiKey realm=\"Security sample\", cookie=\"session\"",
            "credential",
        ),
        (
            get("/basic").basic_auth("ada", Some("wrong")),
            "Basic realm=\"Security sample\", charset=\"UTF-8\"",
            "credential",
        ),
        // Only one of two schemes required together.
        (
            get("/together").header("x-api-key", "hk"),
            "Basic realm=\"Security sample\", charset=\"UTF-8\", ApiKey realm=\"Security sample\", header=\"x-api-key\"",
            "send Authorization: Basic <base64 of user:password> and the x-api-key header",
        ),
        (
            get("/either"),
            "Basic realm=\"Security sample\", charset=\"UTF-8\", ApiKey realm=\"Security sample\", query=\"api_key\"",
            "Authorization: Basic <base64 of user:password>, or the api_key query parameter",
        ),
        // Another scheme's credential does not stand in.
        (get("/oauth").header("x-api-key", "hk"), "Bearer realm=\"Security sample\"", "credential"),
        // The implementation's own 401: the router's last layer names every scheme of the document.
        (
            get("/open").header("x-refuse-me", "1"),
            "Basic realm=\"Security sample\", charset=\"UTF-8\", Bearer realm=\"Security sample\", ApiKey realm=\"Security sample\", cookie=\"session\", ApiKey realm=\"Security sample\", header=\"x-api-key\", ApiKey realm=\"Security sample\", query=\"api_key\"",
            "credential",
        ),
    ];
    for (request, challenge, needle) in refused {
        let (status, said, body) = send(request).await;
        assert_eq!((status, said.as_str()), (401, challenge));
        // The document declares no error object: RFC 9457 problem details.
        assert_eq!((body["title"].as_str(), body["status"].as_u64()), (Some("Unauthorized"), Some(401)));
        assert!(body["detail"].as_str().unwrap().contains(needle), "{body} should say {needle:?}");
    }
    // A path the document does not have asks for the document's own requirement first.
    assert_eq!(send(get("/nowhere")).await.0, 401);
    assert_eq!(send(get("/nowhere").bearer_auth("tok")).await.0, 404);
}

#[tokio::test]
async fn the_client_sends_each_operation_the_credentials_it_asks_for() {
    let url = start().await;
    let credentials = client::Credentials::new()
        .bearer("tok")
        .oauth("otok")
        .header_key("hk")
        .query_key("qk")
        .cookie_key("ck")
        .basic("ada", "se:cret");
    assert!(!format!("{credentials:?}").contains("tok"), "Debug shows no secret: {credentials:?}");
    let all = client::Client::new(&url, credentials.into());
    assert_eq!(all.with_bearer().send().await.unwrap().into_inner(), "bearer:tok");
    assert_eq!(all.with_oauth().send().await.unwrap().into_inner(), "oauth:otok");
    assert_eq!(all.with_header_key().send().await.unwrap().into_inner(), "headerKey:hk");
    assert_eq!(all.with_query_key().page(3).send().await.unwrap().into_inner(), "queryKey:qk page Some(3)");
    assert_eq!(all.with_cookie_key().send().await.unwrap().into_inner(), "cookieKey:ck");
    assert_eq!(all.with_basic().send().await.unwrap().into_inner(), "basic:ada");
    assert_eq!(all.together().send().await.unwrap().into_inner(), "basic:ada+headerKey:hk");
    assert_eq!(all.either().send().await.unwrap().into_inner(), "basic:ada", "the first alternative it can meet");
    assert_eq!(all.open().send().await.unwrap().into_inner(), "anyone");

    // Only an api key for the query: `either` gets its second alternative, `together` nothing.
    let some = client::Client::new(&url, client::Credentials::new().query_key("qk").into());
    assert_eq!(some.either().send().await.unwrap().into_inner(), "queryKey:qk");
    let refused = some.together().send().await.unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(401));
}

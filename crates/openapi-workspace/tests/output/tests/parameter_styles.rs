//! Every parameter style (`samples/parameter_styles.yaml`) over real HTTP: the generated client
//! writes each parameter in its style, in its place (path, query, header, cookie), and the
//! generated server reads it back typed; the same requests written by hand as the
//! specification's style tables write them are read alike; what is malformed is refused with
//! the error object before the operation runs.

mod support;

use std::sync::Arc;

use openapi_workspace_output::parameter_styles::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde_json::{Value, json};

/// Answers what it was given, each parameter under its name.
struct Echo;

fn seen(value: Value) -> types::Seen {
    serde_json::from_value(value).unwrap()
}

impl server::Api for Echo {
    async fn query_styles(
        &self,
        _: RequestContext<()>,
        query: server::QueryStylesQuery,
    ) -> Result<server::QueryStylesResponse, ApiError> {
        Ok(server::QueryStylesResponse::Ok(seen(serde_json::to_value(query).unwrap())))
    }

    async fn path_styles(
        &self,
        _: RequestContext<()>,
        ids: Vec<i64>,
        labels: Vec<String>,
        one: String,
        m: Vec<i64>,
        mx: types::Point,
        obj: types::Pair,
    ) -> Result<server::PathStylesResponse, ApiError> {
        let read = json!({"ids": ids, "labels": labels, "one": one, "m": m, "mx": mx, "obj": obj});
        Ok(server::PathStylesResponse::Ok(seen(read)))
    }

    async fn header_styles(
        &self,
        _: RequestContext<()>,
        x_ids: Vec<i64>,
        x_point: Option<types::Point>,
        x_pair: Option<types::Pair>,
    ) -> Result<server::HeaderStylesResponse, ApiError> {
        Ok(server::HeaderStylesResponse::Ok(seen(json!({"x-ids": x_ids, "x-point": x_point, "x-pair": x_pair}))))
    }

    async fn cookie_styles(
        &self,
        _: RequestContext<()>,
        session: String,
        prefs: Option<Vec<String>>,
        seen_: Option<Vec<i64>>,
        theme: Option<types::Pair>,
        query: server::CookieStylesQuery,
    ) -> Result<server::CookieStylesResponse, ApiError> {
        let read = json!({"session": session, "prefs": prefs, "seen": seen_, "theme": theme, "query": query});
        Ok(server::CookieStylesResponse::Ok(seen(read)))
    }
}

fn pair(a: &str, b: i64) -> types::Pair {
    types::Pair { a: a.to_owned(), b }
}

#[tokio::test]
async fn the_client_writes_every_style_and_the_server_reads_it_back() {
    let url = support::serve(server::router(Arc::new(Echo))).await;
    let client = client::Client::new(&url, client::Config::new());

    let read = client
        .query_styles()
        .csv(vec!["a b".to_owned(), "c".to_owned()])
        .spaced(vec![1, 2, 3])
        .piped(vec!["x".to_owned(), "y,z".to_owned()])
        .filter(types::Filter { name: Some("Ada & co".into()), min: Some(3), active: Some(true) })
        .expand(vec!["customer".to_owned(), "invoice.lines".to_owned()])
        .point(types::Point { x: 1.5, y: -2.0 })
        .pair(pair("k", 7))
        .tags(vec!["t1".to_owned(), "t2".to_owned()])
        .limit(5)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({
            "csv": ["a b", "c"], "spaced": [1, 2, 3], "piped": ["x", "y,z"],
            "filter": {"name": "Ada & co", "min": 3, "active": true},
            "expand": ["customer", "invoice.lines"],
            "point": {"x": 1.5, "y": -2.0}, "pair": {"a": "k", "b": 7},
            "tags": ["t1", "t2"], "limit": 5
        })
    );

    // A scalar or an object in deepObject (Stripe's range filters): either form, read back typed.
    let range = types::Range { gte: Some(5), lt: Some(9), ..Default::default() };
    for (created, read_as) in [
        (types::QueryStylesCreated::Integer(1_700_000_000), json!(1_700_000_000)),
        (types::QueryStylesCreated::Range(range), json!({"gte": 5, "lt": 9})),
    ] {
        let read = client.query_styles().created(created).send().await.unwrap().into_inner();
        assert_eq!(Value::Object(read.0), json!({ "created": read_as }));
    }
    // A second range whose properties share the first's names (Stripe's `created` and
    // `arrival_date`): each read as its own, in either form.
    let due = types::Range { gt: Some(1), lte: Some(3), ..Default::default() };
    for (due, read_as) in [(types::QueryStylesDue::Range(due), json!({"gt": 1, "lte": 3})), (7.into(), json!(7))] {
        let created = types::QueryStylesCreated::Range(types::Range { gt: Some(2), ..Default::default() });
        let read = client.query_styles().created(created).due(due).send().await.unwrap().into_inner();
        assert_eq!(Value::Object(read.0), json!({ "created": {"gt": 2}, "due": read_as }));
    }

    // Nested values in deepObject (Stripe's `lines[0][amount]=5`, `customer[address][city]=…`):
    // sent in brackets, read back typed, the empty text where a union allows it.
    let lines = vec![
        types::QueryStylesLinesItem {
            amount: 5,
            tax_rates: Some(types::QueryStylesLinesItemTaxRates::Array(vec!["t1".into(), "t 2".into()])),
        },
        types::QueryStylesLinesItem {
            amount: -7,
            tax_rates: Some(types::QueryStylesLinesItemTaxRates::String(
                types::QueryStylesLinesItemTaxRatesString::Empty,
            )),
        },
        types::QueryStylesLinesItem { amount: 9, tax_rates: None },
    ];
    let customer = types::QueryStylesCustomer {
        name: Some("Ada [&] co=op".into()),
        address: Some(types::QueryStylesCustomerAddress::Address(types::Address {
            city: Some("Paris".into()),
            line1: None,
        })),
        shipped: Some(types::QueryStylesCustomerShipped {
            posted_at: Some(types::QueryStylesCustomerShippedPostedAt::Range(types::Range {
                gt: Some(5),
                ..Default::default()
            })),
        }),
    };
    let read = client.query_styles().lines(lines).customer(customer).send().await.unwrap().into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({
            "lines": [{"amount": 5, "tax_rates": ["t1", "t 2"]}, {"amount": -7, "tax_rates": ""}, {"amount": 9}],
            "customer": {"name": "Ada [&] co=op", "address": {"city": "Paris"}, "shipped": {"posted_at": {"gt": 5}}},
        })
    );

    let read = client
        .path_styles()
        .ids(vec![3, 1, 2])
        .labels(vec!["a".to_owned(), "b c".to_owned()])
        .one("solo.one")
        .m(vec![4, 5])
        .mx(types::Point { x: 0.5, y: 1.0 })
        .obj(pair("é/ü", -1))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({
            "ids": [3, 1, 2], "labels": ["a", "b c"], "one": "solo.one", "m": [4, 5],
            "mx": {"x": 0.5, "y": 1.0}, "obj": {"a": "é/ü", "b": -1}
        })
    );

    let read = client
        .header_styles()
        .x_ids(vec![1, 2])
        .x_point(types::Point { x: 3.0, y: 4.0 })
        .x_pair(pair("v", 2))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({"x-ids": [1, 2], "x-point": {"x": 3.0, "y": 4.0}, "x-pair": {"a": "v", "b": 2}})
    );

    let read = client
        .cookie_styles()
        .session_cookie("s; 1=2")
        .session("in the query")
        .prefs(vec!["dark".to_owned(), "wide".to_owned()])
        .seen(vec![9, 8])
        .theme(pair("m", 12))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({
            "session": "s; 1=2", "prefs": ["dark", "wide"], "seen": [9, 8], "theme": {"a": "m", "b": 12},
            "query": {"session": "in the query"}
        })
    );

    // What is optional may be left out; a required cookie may not.
    let read = client.cookie_styles().session_cookie("only").send().await.unwrap().into_inner();
    assert_eq!(
        Value::Object(read.0),
        json!({"session": "only", "prefs": null, "seen": null, "theme": null, "query": {}})
    );
}

/// Answers the request as it arrived: its path and query, and the headers the styles write.
async fn wire(request: axum::extract::Request) -> axum::Json<Value> {
    let header = |name: &str| request.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    axum::Json(json!({
        "uri": request.uri().to_string(),
        "x-ids": header("x-ids"), "x-point": header("x-point"), "x-pair": header("x-pair"), "cookie": header("cookie"),
    }))
}

#[tokio::test]
async fn the_client_writes_what_the_style_tables_say() {
    let url = support::serve(axum::Router::new().fallback(wire)).await;
    let client = client::Client::new(&url, client::Config::new());
    let sent = |read: types::Seen| Value::Object(read.0);

    let read = client
        .query_styles()
        .csv(vec!["a".to_owned(), "b".to_owned()])
        .spaced(vec![1, 2])
        .piped(vec!["x".to_owned(), "y".to_owned()])
        .filter(types::Filter { name: Some("n".into()), min: None, active: Some(false) })
        .expand(vec!["a".to_owned()])
        .pair(pair("k", 7))
        .send()
        .await
        .unwrap()
        .into_inner();
    // Delimiters percent-encoded, as `application/x-www-form-urlencoded` writes them.
    assert_eq!(
        sent(read)["uri"],
        "/query?csv=a%2Cb&spaced=1+2&piped=x%7Cy&filter%5Bactive%5D=false&filter%5Bname%5D=n&expand%5B%5D=a&pair=a%2Ck%2Cb%2C7"
    );

    let range = types::Range { gte: Some(5), ..Default::default() };
    let read =
        client.query_styles().created(types::QueryStylesCreated::Range(range)).send().await.unwrap().into_inner();
    assert_eq!(sent(read)["uri"], "/query?created%5Bgte%5D=5");
    let read = client.query_styles().created(types::QueryStylesCreated::Integer(5)).send().await.unwrap().into_inner();
    assert_eq!(sent(read)["uri"], "/query?created=5");
    let due = types::QueryStylesDue::Range(types::Range { gt: Some(1), ..Default::default() });
    let read = client.query_styles().created(types::QueryStylesCreated::Integer(5)).due(due).send().await.unwrap();
    assert_eq!(sent(read.into_inner())["uri"], "/query?created=5&due%5Bgt%5D=1");

    let line = types::QueryStylesLinesItem {
        amount: 5,
        tax_rates: Some(types::QueryStylesLinesItemTaxRates::Array(vec!["t1".into()])),
    };
    let customer = types::QueryStylesCustomer {
        shipped: Some(types::QueryStylesCustomerShipped {
            posted_at: Some(types::QueryStylesCustomerShippedPostedAt::Integer(9)),
        }),
        ..Default::default()
    };
    let read = client.query_styles().lines(vec![line]).customer(customer).send().await.unwrap();
    assert_eq!(
        sent(read.into_inner())["uri"],
        "/query?lines%5B0%5D%5Bamount%5D=5&lines%5B0%5D%5Btax_rates%5D%5B0%5D=t1&customer%5Bshipped%5D%5Bposted_at%5D=9"
    );

    let read = client
        .path_styles()
        .ids(vec![3, 1])
        .labels(vec!["a".to_owned(), "b".to_owned()])
        .one("o")
        .m(vec![4, 5])
        .mx(types::Point { x: 0.5, y: 1.0 })
        .obj(pair("v", -1))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sent(read)["uri"], "/path/3,1/.a.b/.o/;m=4,5/;x=0.5;y=1.0/a=v,b=-1");

    let read = client
        .header_styles()
        .x_ids(vec![1, 2])
        .x_point(types::Point { x: 3.0, y: 4.0 })
        .x_pair(pair("v", 2))
        .send()
        .await
        .unwrap()
        .into_inner();
    let read = sent(read);
    assert_eq!(
        (&read["x-ids"], &read["x-point"], &read["x-pair"]),
        (&json!("1,2"), &json!("x=3.0,y=4.0"), &json!("a,v,b,2"))
    );

    let read = client
        .cookie_styles()
        .session_cookie("s 1")
        .prefs(vec!["dark".to_owned(), "wide".to_owned()])
        .seen(vec![9, 8])
        .theme(pair("m", 12))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sent(read)["cookie"], "session=s%201; prefs=dark,wide; seen=9; seen=8; theme=a,m,b,12");
}

#[tokio::test]
async fn a_value_holding_its_styles_delimiter_is_refused_by_the_client() {
    let url = support::serve(server::router(Arc::new(Echo))).await;
    let client = client::Client::new(&url, client::Config::new());
    let error = client.query_styles().csv(vec!["a,b".to_owned()]).send().await.unwrap_err();
    assert!(error.to_string().contains("\"a,b\" holds ','"), "{error}");
    let error = client.query_styles().piped(vec!["a|b".to_owned()]).send().await.unwrap_err();
    assert!(error.to_string().contains("'|'"), "{error}");
}

#[tokio::test]
async fn requests_written_as_the_style_tables_write_them_are_read() {
    let url = support::serve(server::router(Arc::new(Echo))).await;
    let http = reqwest::Client::new();
    let get = |path: &str| http.get(format!("{url}{path}"));
    let body = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        (status, response.json::<Value>().await.unwrap())
    };
    // A GET of `path`, answered: its status and body.
    let fetch = |path: &str| {
        let request = get(path);
        async move { body(request.send().await.unwrap()).await }
    };

    // The specification's examples: `color=blue,black,brown`, `color=blue%20black%20brown`,
    // `color=blue|black|brown`, `color[R]=100&color[G]=200`, and objects in `form`.
    let (status, read) = fetch(
        "/query?csv=blue,black,brown&spaced=1%202%203&piped=a|b&filter[name]=n&filter[min]=1&x=1&y=2&pair=a,k,b,3",
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({
            "csv": ["blue", "black", "brown"], "spaced": [1, 2, 3], "piped": ["a", "b"],
            "filter": {"name": "n", "min": 1}, "point": {"x": 1.0, "y": 2.0}, "pair": {"a": "k", "b": 3}
        })
    );
    // Stripe's arrays in deepObject, with or without indexes (in their order).
    let (status, read) = fetch("/query?expand[]=a&expand[]=b").await;
    assert_eq!((status, read), (200, json!({"expand": ["a", "b"]})));
    let (status, read) = fetch("/query?expand[1]=b&expand[0]=a").await;
    assert_eq!((status, read), (200, json!({"expand": ["a", "b"]})));

    // Stripe's range filters: a scalar, or an object in deepObject.
    let (status, read) = fetch("/query?created=5").await;
    assert_eq!((status, read), (200, json!({"created": 5})));
    let (status, read) = fetch("/query?created[gt]=1&created[lte]=9").await;
    assert_eq!((status, read), (200, json!({"created": {"gt": 1, "lte": 9}})));

    // Stripe's nested filters, by index or appended, a union's arm by what is given.
    let (status, read) = fetch(
        "/query?lines[1][amount]=7&lines[0][amount]=5&lines[0][tax_rates][]=a&lines[1][tax_rates]=\
             &customer[address]=&customer[shipped][posted_at][gte]=3",
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({
            "lines": [{"amount": 5, "tax_rates": ["a"]}, {"amount": 7, "tax_rates": ""}],
            "customer": {"address": "", "shipped": {"posted_at": {"gte": 3}}},
        })
    );

    // The delimiter percent-encoded reads the same (OpenAPI 3.1.1, appendix E), and an empty
    // value is an empty array.
    let (status, read) = fetch("/query?csv=blue%2Cblack&piped=").await;
    assert_eq!((status, read), (200, json!({"csv": ["blue", "black"], "piped": []})));

    // Path: simple `3,4`, label exploded `.a.b`, label `.x`, matrix `;m=1,2`, matrix exploded
    // `;x=1;y=2`, simple exploded `a=v,b=2`.
    let (status, read) = fetch("/path/3,4/.a.b/.x/;m=1,2/;x=1;y=2/a=v,b=2").await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({"ids": [3, 4], "labels": ["a", "b"], "one": "x", "m": [1, 2],
               "mx": {"x": 1.0, "y": 2.0}, "obj": {"a": "v", "b": 2}})
    );

    // Headers: lists with or without spaces after the commas.
    let (status, read) = body(
        get("/headers")
            .header("X-Ids", "1, 2,3")
            .header("X-Point", "x=1,y=2")
            .header("X-Pair", "a,v,b,5")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read, json!({"x-ids": [1, 2, 3], "x-point": {"x": 1.0, "y": 2.0}, "x-pair": {"a": "v", "b": 5}}));

    // Cookies: percent-encoded values, `a,b` lists, a cookie per value when exploded.
    let (status, read) = body(
        get("/cookies")
            .header("Cookie", "session=a%3Bb; prefs=x,y; seen=1; seen=2; theme=a,q,b,4; other=ignored")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({"session": "a;b", "prefs": ["x", "y"], "seen": [1, 2], "theme": {"a": "q", "b": 4}, "query": {}})
    );

    // Refused, saying what and where, before the operation runs.
    for (request, says) in [
        (get("/query?spaced=1%20x"), "spaced"),
        (get("/query?filter[colour]=red"), "`colour` is not one of its fields"),
        (get("/query?created=5&created[gt]=1"), "given both as a value and as an object"),
        (get("/query?created[gte]=soon"), "created"),
        (get("/query?pair=a,k,b"), "a key without its value"),
        (get("/query?lines[0][amount]=many"), "lines"),
        (get("/query?lines[0][tax_rates]=x"), "lines"),
        (get("/query?customer[address][city"), "a `[` without its `]`"),
        (get("/query?customer[name]=a&customer[name][first]=b"), "a value and properties both"),
        (get("/query?limit=500"), "limit"),
        (get("/query?limit=1&limit=2"), "`limit` is given more than once"),
        (get("/query?nope=1"), "`nope` is not one this operation takes"),
        (get("/path/3,4/a.b/.x/;m=1,2/;x=1;y=2/a=v,b=2"), "does not start with `.`"),
        (get("/path/3,4/.a.b/.x/;n=1,2/;x=1;y=2/a=v,b=2"), "matrix style"),
        (get("/path/3,x/.a.b/.x/;m=1,2/;x=1;y=2/a=v,b=2"), "path parameter `ids`"),
        (get("/path/3,4/.a.b/.x/;m=1,2/;x=1;y=2/a=v,b"), "`key=value`"),
        (get("/headers"), "header `x-ids` is required"),
        (get("/headers").header("X-Ids", "1").header("X-Point", "x=1"), "header `x-point`"),
        (get("/cookies"), "cookie `session` is required"),
        (get("/cookies").header("Cookie", "session=s; seen=1; seen=two"), "cookie `seen`"),
        (get("/cookies").header("Cookie", "session=s; session=t"), "given more than once"),
    ] {
        let (status, read) = body(request.send().await.unwrap()).await;
        assert_eq!(status, 400, "{says}: {read}");
        // The document declares no error object: RFC 9457 problem details.
        assert_eq!((&read["title"], &read["status"]), (&"Bad Request".into(), &400.into()), "{read}");
        assert!(read["detail"].as_str().unwrap().contains(says), "{says:?} not in {read}");
    }
}

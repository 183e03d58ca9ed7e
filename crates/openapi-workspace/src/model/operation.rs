//! The document's operations as the server generator sees them: each parameter, body media type
//! and response with its Rust type. The document is normalised first (`normalise`), so every
//! schema that is a type of its own is a `$ref`; what is left inline is a primitive, an array or
//! any JSON value.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

pub(crate) struct Op {
    /// Its JSON pointer in the normalised document (`Spec::raw`).
    pub raw: String,
    /// Its method as sent: lower case for 3.0's eight, as the document spells it for others.
    pub method: String,
    pub path: String,
    pub operation_id: String,
    pub doc: String,
    pub fn_name: Ident,
    /// The operation's name as a type (`GetBalance`), for its response enum and query struct.
    pub type_name: String,
    /// What the router asks of the request before the operation runs; `None`: nothing.
    pub requirement: Option<super::security::Requirement>,
    pub path_params: Vec<Param>,
    pub header_params: Vec<Param>,
    pub cookie_params: Vec<Param>,
    pub query_params: Vec<Param>,
    pub body: Option<Body>,
    /// The documented answers the implementation gives through its response enum: successes,
    /// and errors whose body or headers the error object cannot carry.
    pub replies: Vec<Reply>,
    /// The documented errors whose body is the runtime's error object (and whose headers, if
    /// any, are `WWW-Authenticate` and `Retry-After`): answered as `Err(ApiError)`, the one
    /// channel for them, with no variant of their own.
    pub errors: Vec<Status>,
    /// What the mock answers until it is implemented.
    pub mock: Option<super::mock::Mock>,
}

impl Op {
    /// Its method as the request line has it: 3.0's eight upper case, others as written.
    pub(crate) fn http_method(&self) -> String {
        crate::model::methods::on_the_wire(&self.method)
    }

    pub(crate) fn ident(&self, suffix: &str) -> Ident {
        format_ident!("{}{}", self.type_name, suffix)
    }
}

/// `ops` as axum's router serves them (`methods::routes`): each at its route, and those it
/// cannot serve apart, each with its pointer and why.
pub(crate) fn routed(mut ops: Vec<Op>) -> (Vec<Op>, Vec<(String, String)>) {
    let routes = super::methods::routes(ops.iter().map(|op| op.path.as_str()));
    let mut unserved = Vec::new();
    ops.retain_mut(|op| match &routes[&op.path] {
        Ok(route) => {
            serve_at(op, route);
            true
        }
        Err(why) => {
            unserved.push((op.raw.clone(), why.clone()));
            false
        }
    });
    (ops, unserved)
}

/// `op` served at `route`, a path alike but for its parameters' names (`methods::routes`): its
/// path and its path parameters' names become the route's, by position, for the router that
/// reads them by name (the Rust names stay).
fn serve_at(op: &mut Op, route: &str) {
    if op.path == route {
        return;
    }
    let names = |path| crate::read::document::template_names(path).collect::<Vec<_>>();
    let (own, routed) = (names(&op.path), names(route));
    for param in &mut op.path_params {
        if let Some(at) = own.iter().position(|name| *name == param.name) {
            param.name = routed[at].to_owned();
            param.wire.name = param.name.clone();
        }
    }
    op.path = route.to_owned();
}

pub(crate) struct Param {
    pub name: String,
    pub ident: Ident,
    pub ty: TokenStream,
    pub kind: crate::model::names::TypeKind,
    pub required: bool,
    pub default: Option<Value>,
    pub doc: Option<String>,
    pub schema: Value,
    /// How it is written (its style) and what its value is.
    pub wire: crate::read::wire::Wire,
}

/// A request body: one media type, or several (the trait then receives an enum of them).
pub(crate) struct Body {
    pub required: bool,
    pub media: Vec<Media>,
}

pub(crate) struct Media {
    /// The media type as the document writes it.
    pub media_type: String,
    pub kind: MediaKind,
    /// Its variant when the body is offered in several media types.
    pub variant: Ident,
}

pub(crate) enum MediaKind {
    /// JSON, parsed into `ty` and validated against `schema`.
    Json { ty: TokenStream, schema: Value },
    /// `application/x-www-form-urlencoded` fields, parsed into `ty` and validated against `schema`.
    Form { ty: TokenStream, schema: Value },
    /// `multipart/form-data`: the parts, as the struct `ty` (`{Op}Parts`) of `fields`; `schema`
    /// is the document's for the fields (files aside), which they are validated against.
    Multipart { ty: Ident, fields: Vec<PartField>, schema: Value },
    /// `text/*`: UTF-8 text.
    Text,
    /// Anything else: the bytes as they came.
    Bytes,
}

/// A part of a multipart body, as a field of its struct.
pub(crate) struct PartField {
    pub name: String,
    pub ident: Ident,
    pub kind: PartKind,
    pub required: bool,
    pub doc: Option<String>,
}

pub(crate) enum PartKind {
    /// A file; its content type one of these when the document's `encoding` lists any.
    File { accepted: Vec<String> },
    /// Several files of one name.
    Files { accepted: Vec<String> },
    /// A field of type `ty`, read as `read` says.
    Value { ty: TokenStream, read: PartRead },
}

/// How a field's parts are read: one text of this type, several making an array, or JSON.
#[derive(Clone, Copy)]
pub(crate) enum PartRead {
    Text(crate::read::wire::Leaf),
    Texts(crate::read::wire::Leaf),
    Json,
}

impl MediaKind {
    pub(crate) fn ty(&self) -> TokenStream {
        match self {
            Self::Json { ty, .. } | Self::Form { ty, .. } => ty.clone(),
            Self::Multipart { ty, .. } => quote!(#ty),
            Self::Text => quote!(::std::string::String),
            Self::Bytes => quote!(axum::body::Bytes),
        }
    }
}

/// The status a response is documented for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Code(u16),
    /// `1XX` … `5XX`: the class's first digit.
    Range(u16),
    Default,
}

/// A documented response: one variant of the operation's response enum.
pub(crate) struct Reply {
    pub status: Status,
    pub variant: Ident,
    pub doc: String,
    pub body: Option<ReplyBody>,
    pub headers: Vec<ReplyHeader>,
}

pub(crate) enum ReplyBody {
    Json(TokenStream),
    /// Not JSON: bytes of the media type (a wildcard or several let the implementer choose).
    Raw {
        media_type: String,
    },
    /// `101` with content: the protocol switch, answered with a response the implementer builds.
    Upgrade,
    /// `text/event-stream`: a stream of events whose data is of this type.
    Events(TokenStream),
    /// A stream of `item`s as `media_type` frames them (JSON Lines, a JSON text sequence).
    Items {
        item: TokenStream,
        media_type: String,
    },
    /// JSON of `json` or events of `item`, as the request's `Accept` asks.
    Negotiated {
        json: TokenStream,
        item: TokenStream,
    },
}

/// A response header the document declares, as a field of its variant.
pub(crate) struct ReplyHeader {
    pub name: String,
    pub ident: Ident,
    pub ty: TokenStream,
    pub required: bool,
    pub doc: Option<String>,
}

impl Op {
    /// Whether the router authenticates it (the operation then receives the caller, `P`).
    pub(crate) fn secured(&self) -> bool {
        self.requirement.is_some()
    }
}

/// A status's variant name: its reason phrase (`NotFound`) or `Status<code>`; a class
/// (`ClientError` for `4XX`); `Default` for `default`.
pub(crate) fn variant(status: Status) -> Ident {
    match status {
        Status::Code(code) => match status_name(code) {
            Some(name) => format_ident!("{}", name),
            None => format_ident!("Status{}", code),
        },
        Status::Range(class) => {
            format_ident!(
                "{}",
                ["Informational", "Success", "Redirection", "ClientError", "ServerError"][class as usize - 1]
            )
        }
        Status::Default => format_ident!("Default"),
    }
}

/// The reason phrases of the statuses `http::StatusCode` names, in camel case.
pub(crate) fn status_name(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "SwitchingProtocols",
        200 => "Ok",
        201 => "Created",
        202 => "Accepted",
        203 => "NonAuthoritativeInformation",
        204 => "NoContent",
        205 => "ResetContent",
        206 => "PartialContent",
        300 => "MultipleChoices",
        301 => "MovedPermanently",
        302 => "Found",
        303 => "SeeOther",
        304 => "NotModified",
        307 => "TemporaryRedirect",
        308 => "PermanentRedirect",
        400 => "BadRequest",
        401 => "Unauthorized",
        402 => "PaymentRequired",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        408 => "RequestTimeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "LengthRequired",
        412 => "PreconditionFailed",
        413 => "PayloadTooLarge",
        414 => "UriTooLong",
        415 => "UnsupportedMediaType",
        416 => "RangeNotSatisfiable",
        417 => "ExpectationFailed",
        422 => "UnprocessableEntity",
        423 => "Locked",
        425 => "TooEarly",
        428 => "PreconditionRequired",
        429 => "TooManyRequests",
        431 => "RequestHeaderFieldsTooLarge",
        500 => "InternalServerError",
        501 => "NotImplemented",
        502 => "BadGateway",
        503 => "ServiceUnavailable",
        504 => "GatewayTimeout",
        _ => return None,
    })
}

/// progenitor's name for an operation's method and for its hooks' `operation_id` (its
/// `util::sanitize` in snake case): `2getPhoto` is `_2get_photo`, `move` is `move_`.
pub(crate) fn method_name(operation_id: &str) -> String {
    progenitor_name(operation_id, heck::ToSnakeCase::to_snake_case)
}

/// progenitor's name for an operation's builder (`util::sanitize` in Pascal case).
pub(crate) fn builder_name(operation_id: &str) -> String {
    progenitor_name(operation_id, heck::ToUpperCamelCase::to_upper_camel_case)
}

fn progenitor_name(operation_id: &str, case: fn(&str) -> String) -> String {
    let cased = match operation_id {
        "+1" => "plus1".to_owned(),
        "-1" => "minus1".to_owned(),
        _ => case(&operation_id.replace('\'', "").replace(|c: char| !unicode_ident::is_xid_continue(c), "-")),
    };
    let named = match cased.chars().next() {
        None => case("x"),
        Some(c) if unicode_ident::is_xid_start(c) => cased,
        Some(_) => format!("_{cased}"),
    };
    // The words typify does not take as identifiers (`accept_as_ident`).
    const KEYWORDS: [&str; 53] = [
        "_", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn",
        "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
        "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "Self", "self", "static", "struct",
        "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while",
        "yield",
    ];
    if KEYWORDS.contains(&named.as_str()) { format!("{named}_") } else { named }
}

//! A document as the mock engine serves it: data, not code. The generator writes it from its
//! model (`openapi-workspace mock` in memory; a generated server's `mock.json`), and the engine
//! (`super::router`) reads it, so both answer alike.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::Wire;

/// Everything the engine needs of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The document's `info.title`, for the log.
    pub title: String,
    /// The schemas the requests are validated against: `schemas.json`'s document, the
    /// components in JSON Schema 2020-12 (`{"components": {"schemas": …}}`). Left out of a
    /// generated server's `mock.json`, which sets it from its `schemas.json`.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub schemas: Value,
    /// The document's error object, which every refusal is written in.
    pub error_object: ErrorObjectPlan,
    /// The `WWW-Authenticate` challenge of a `401` that carries none of its own.
    pub challenge: String,
    /// What a request to a path the document does not have must present before it is told so
    /// (paths cannot be probed without a credential); `None` answers `404` at once.
    pub unknown_path: Option<RequirementPlan>,
    pub operations: Vec<OperationPlan>,
    /// What a stateful mock keeps (`OperationPlan::state` says which operation does what).
    #[serde(default)]
    pub resources: Vec<ResourcePlan>,
}

/// A resource a stateful mock keeps: a collection path and its item path (`/pets`,
/// `/pets/{petId}`), inferred by the generator (`write/mock_plan/resources.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourcePlan {
    /// For messages: the collection's last segment (`pets`).
    pub name: String,
    /// The collection's route (`/owners/{ownerId}/pets`), which a seed file's keys are matched
    /// against.
    pub collection: String,
    /// The collection path's parameters, whose values scope its items (an owner's pets).
    pub scope: Vec<String>,
    /// The resource whose item path its collection path is under (owners, of
    /// `/owners/{ownerId}/pets`): the scope's last value is that item's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// The item path's last parameter: the id.
    pub id_param: String,
    /// The item's property that holds its id.
    pub id_property: String,
    pub id_kind: IdKind,
    /// The list's property that holds the items; `None`: the list is a bare array.
    pub list_property: Option<String>,
    /// Date-time properties set when an item is made (`created_at`), and when it changes too
    /// (`updated_at`).
    pub created: Vec<String>,
    pub updated: Vec<String>,
    /// The item's properties a request's body may set (its schema's, but write-only ones);
    /// `None`: any (a schema that lists none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<String>>,
    /// How its list is paged; `None`: whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paging: Option<PagingPlan>,
}

/// How a list is paged, by the list operation's own query parameters, and where its answer says
/// what comes next: as the generated client's page streams follow it (the generator's
/// `model/pagination.rs`), with the page's size read from a parameter named like one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PagingPlan {
    /// The parameter saying how many items a page holds, and how many when it is not sent.
    pub size: Option<String>,
    pub default_size: Option<u64>,
    /// The parameter saying where a page starts.
    pub start: Option<StartPlan>,
    /// The list object's property that says what the next page's request sends.
    pub next: Option<NextPlan>,
    /// Its answer documents a `Link` header: the next page's URL is sent there, `rel="next"`.
    pub link: bool,
}

/// The list object's property given the next page: absent on the last page (`null` where it is
/// required).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextPlan {
    /// Its path: a property of the list object, or of one of its objects (`meta.next_cursor`).
    pub property: Vec<String>,
    pub form: NextForm,
    pub required: bool,
}

/// What a next-page property holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextForm {
    /// The next page's URL.
    Url,
    /// What the start parameter is sent next (a cursor, page or offset), as text.
    Text,
    /// The same, as a number (a page or an offset).
    Number,
}

/// Where a page starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StartPlan {
    /// This many items in.
    Offset(String),
    /// At this page, counted from `first` (1, or 0 where the parameter's minimum is 0).
    Page { name: String, first: u64 },
    /// After the item of this id (the next page's cursor is the page's last item's id).
    After(String),
}

/// How a new item's id is made: as its path parameter's schema says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IdKind {
    Uuid,
    /// A sequence: 1, 2, 3…
    Integer,
    Text,
}

/// What an operation does to its resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    Create,
    Read,
    Replace,
    /// A JSON merge patch (RFC 7386).
    Merge,
    Delete,
    List,
    /// A `POST` to an item's sub-path (`/orders/{id}/cancel`): `StatePlan::set` says what it
    /// changes.
    Action,
}

/// An operation's part in a resource (`Plan::resources`, by index).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatePlan {
    pub resource: usize,
    pub role: Role,
    /// An action's change: the item's property and the value it is given (`status`,
    /// `"cancelled"`); `None` changes nothing but the item's update time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<(String, Value)>,
    /// Where a create's idempotency key is: a repeat with the same key (and body) answers the
    /// first answer again, and creates nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency: Option<KeyPlan>,
    /// A create's answer documents a `Location` header: the new item's URL.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub location: bool,
}

/// An error object: JSON text with the error's parts in their places (the runtime's
/// `ErrorObject`, owning its text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObjectPlan {
    pub media: String,
    pub parts: Vec<PartPlan>,
}

/// A piece of an [`ErrorObjectPlan`] (as the runtime's `ErrorPart`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PartPlan {
    Text(String),
    Message,
    MessageUpTo(usize),
    Status,
    StatusText,
    Reason,
}

/// The credentials an operation asks for: any one of `alternatives`, each the credentials
/// presented together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequirementPlan {
    pub alternatives: Vec<Vec<CredentialPlan>>,
    /// Its `WWW-Authenticate` challenge.
    pub challenge: String,
    /// What a client sends, for the `401`'s message.
    pub hint: String,
}

/// Where a credential is found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CredentialPlan {
    Bearer,
    Basic,
    Header(String),
    Query(String),
    Cookie(String),
}

/// One operation: where it is served, what it reads and what it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationPlan {
    pub operation_id: String,
    /// Upper case, as on the wire: `GET`.
    pub method: String,
    /// The route, in axum's syntax: `/pets/{petId}`.
    pub path: String,
    pub requirement: Option<RequirementPlan>,
    pub params: Vec<ParamPlan>,
    pub body: Option<BodyPlan>,
    /// What it answers; `None`: the document gives it no success (answered `501`).
    pub answer: Option<AnswerPlan>,
    /// The error objects of its own responses, which its refusals are written in rather than
    /// the document's (by status, class or `default`).
    pub own_errors: Vec<(StatusPlan, ErrorObjectPlan)>,
    /// The statuses its refusals are answered with where it documents others than ours: the
    /// `ApiError::refused_as` of a generated handler (`422` for `400`; whether a path's text that
    /// is no id stays `404`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_as: Option<(u16, bool)>,
    /// The status a stateful conflict (an idempotency key sent again with another body, an id
    /// taken, a patch that does not apply) is answered with where the operation documents no
    /// `409` but another refusal (`422`, else `400`); `None`: `409`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<u16>,
    /// Its part in a resource, when the mock is stateful.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StatePlan>,
}

/// Where an operation's idempotency key is (the generator's `model/idempotency.rs`, which the
/// generated client's retries follow too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyPlan {
    Header(String),
    /// A top-level property of the JSON body.
    Body(String),
}

/// The statuses an operation's own error object is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatusPlan {
    Code(u16),
    Class(u16),
    Default,
}

/// A parameter: how it is written, whether it must be, its default and its JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamPlan {
    pub wire: Wire<String, Vec<(String, crate::wire::Leaf)>>,
    /// A path parameter that is a UUID: any other text names nothing, `404` (`path::Id`).
    pub id: bool,
    pub required: bool,
    pub default: Option<Value>,
    pub schema: Value,
}

/// A request body: the media types it may come in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyPlan {
    pub required: bool,
    pub media: Vec<MediaPlan>,
}

/// One media type of a body and how it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaPlan {
    pub media_type: String,
    pub kind: MediaKindPlan,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MediaKindPlan {
    /// Parsed and validated against the JSON Schema.
    Json(Value),
    /// `application/x-www-form-urlencoded`, typed by the schema and validated against it.
    Form(Value),
    /// `multipart/form-data`: its parts, and the schema their values are validated against.
    Multipart { parts: Vec<PartReadPlan>, schema: Value },
    /// UTF-8 text.
    Text,
    /// Any bytes.
    Bytes,
}

/// A multipart part: its name and how it is read (the runtime's `multipart::Kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartReadPlan {
    pub name: String,
    pub read: PartKindPlan,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PartKindPlan {
    /// A file, of one of these content types when any is listed.
    File(Vec<String>),
    Text(crate::wire::Leaf),
    Texts(crate::wire::Leaf),
    Json,
}

/// The mock's answer: its status, the bodies it offers (content type and text; the one the
/// request's `Accept` prefers is sent) and its required headers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerPlan {
    pub status: u16,
    pub offered: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    /// The JSON Schema of its JSON body, which a stateful answer is checked against before it
    /// is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

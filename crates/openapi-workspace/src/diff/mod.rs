//! `openapi-workspace diff`: what changed between two versions of a document, judged by what it
//! does to the clients written against the older one. A stage beside `write`, reading both
//! documents exactly as the generator does (`read`: 3.0, 3.1 and 3.2 to one view).
//!
//! Direction decides: what a client sends (request bodies, parameters, its answers to webhooks)
//! may only widen; what it receives (responses, webhook payloads) may only narrow. `readOnly`
//! properties are not judged on the request side, `writeOnly` ones not on the response side.
//! Each change has a [`Level`], a [`Rule`], its JSON pointer in each document and a sentence.

mod operations;
#[cfg(any(test, feature = "oracle"))]
pub(crate) mod oracle;
pub(crate) mod report;
mod schemas;

use serde_json::Value;

use crate::read::Spec;

pub use report::{Format, Verdict};

/// How much a change matters to the clients of the older document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Nothing a client did before stops working; something new is offered.
    Info,
    /// A client may notice: a value it did not see before, a property or operation gone that it
    /// was not promised.
    Warning,
    /// A client written against the base document fails against the head.
    Breaking,
}

/// What kind of change it is: a stable name for each, in the JSON and the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    OperationRemoved,
    OperationAdded,
    ParameterAddedRequired,
    ParameterAdded,
    ParameterRemoved,
    ParameterMoved,
    ParameterNowRequired,
    ParameterRestyled,
    RequestBodyAddedRequired,
    RequestBodyAdded,
    RequestBodyRemoved,
    RequestBodyNowRequired,
    RequestMediaTypeRemoved,
    RequestMediaTypeAdded,
    ResponseRemoved,
    ResponseAdded,
    ResponseMediaTypeRemoved,
    ResponseMediaTypeAdded,
    ResponseHeaderRemoved,
    ResponseHeaderNoLongerRequired,
    ResponseHeaderAdded,
    ResponseLinkRemoved,
    ResponseLinkChanged,
    ResponseLinkAdded,
    SecurityRequirementAdded,
    SecurityAlternativeRemoved,
    SecurityAlternativeAdded,
    SecuritySchemeChanged,
    WebhookRemoved,
    WebhookAdded,
    TypeNarrowed,
    TypeWidened,
    NullableRemoved,
    NullableAdded,
    EnumValueRemoved,
    EnumValueAdded,
    EnumAdded,
    BoundNarrowed,
    BoundWidened,
    PatternChanged,
    FormatChanged,
    PropertyNowRequired,
    PropertyNoLongerRequired,
    PropertyRemoved,
    PropertyAdded,
    PropertyAddedRequired,
    AdditionalPropertiesRefused,
    AdditionalPropertiesAllowed,
    UnionArmRemoved,
    UnionArmAdded,
    DiscriminatorChanged,
}

impl Rule {
    /// Whether the change offers something new (it asks for a minor version at least).
    fn adds(self) -> bool {
        matches!(
            self,
            Rule::OperationAdded
                | Rule::ParameterAdded
                | Rule::RequestBodyAdded
                | Rule::RequestMediaTypeAdded
                | Rule::ResponseAdded
                | Rule::ResponseMediaTypeAdded
                | Rule::ResponseHeaderAdded
                | Rule::ResponseLinkAdded
                | Rule::SecurityAlternativeAdded
                | Rule::WebhookAdded
                | Rule::PropertyAdded
                | Rule::EnumValueAdded
                | Rule::TypeWidened
                | Rule::BoundWidened
                | Rule::UnionArmAdded
                | Rule::AdditionalPropertiesAllowed
        )
    }
}

/// One change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    pub level: Level,
    pub rule: Rule,
    /// Where it is in the base document and in the head (one of them for what is only in one).
    pub base: Option<String>,
    pub head: Option<String>,
    /// What changed and what it does to a client, in a sentence.
    pub message: String,
}

/// Every change, in the documents' order, and the version change they ask for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diff {
    pub changes: Vec<Change>,
    pub verdict: Verdict,
}

/// The changes from `base` to `head`, and the verdict on the version change made.
pub(crate) fn diff(base: &Spec, head: &Spec) -> Diff {
    compared(base, head).0
}

/// [`diff`], and the pairs of schemas the operations handed over for comparison.
fn compared<'a>(base: &'a Spec, head: &'a Spec) -> (Diff, Vec<schemas::Compared<'a>>) {
    let mut changes = Vec::new();
    let mut handed = operations::compare(&mut changes, Side::of(base), Side::of(head), Audience::Api);
    operations::security_schemes(&mut changes, Side::of(base), Side::of(head));
    match (base.webhooks(), head.webhooks()) {
        (Some(base), Some(head)) => {
            handed.extend(operations::compare(&mut changes, Side::of(base), Side::of(head), Audience::Webhooks))
        }
        (Some(base), None) => operations::all_gone(&mut changes, Side::of(base), Audience::Webhooks),
        (None, Some(head)) => operations::all_new(&mut changes, Side::of(head), Audience::Webhooks),
        (None, None) => {}
    }
    let verdict = Verdict::of(&changes, version(base), version(head));
    (Diff { changes, verdict }, handed)
}

fn version(spec: &Spec) -> Option<String> {
    spec.original().pointer("/info/version").and_then(Value::as_str).map(str::to_owned)
}

/// One document as the comparison reads it: its normalised JSON and its components.
#[derive(Clone, Copy)]
pub(crate) struct Side<'a> {
    pub raw: &'a Value,
    pub components: &'a Value,
}

impl<'a> Side<'a> {
    fn of(spec: &'a Spec) -> Self {
        Self { raw: &spec.raw, components: spec.raw.get("components").unwrap_or(&Value::Null) }
    }
}

/// Whose operations these are: the API's (the client calls them), or the webhooks' (the client
/// receives them, so what is sent and what is answered change places).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Audience {
    Api,
    Webhooks,
}

/// Which way values travel, seen from the client of the base document.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Direction {
    /// The client writes it: the head must take every value the base took.
    Sent,
    /// The client reads it: the head may give only values the base could.
    Received,
}

impl Direction {
    /// Whether a property of this (resolved) schema never travels this way: `readOnly` ones are
    /// not sent, `writeOnly` ones not received.
    pub(crate) fn never_carries(self, property: &Value) -> bool {
        let flag = match self {
            Direction::Sent => "readOnly",
            Direction::Received => "writeOnly",
        };
        property.get(flag) == Some(&Value::Bool(true))
    }
}

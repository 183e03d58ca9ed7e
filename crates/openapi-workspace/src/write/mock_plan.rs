//! The mock engine's plan (`openapi_workspace_runtime::mock::Plan`) written from the model: each
//! operation's route, credentials, parameters with their wire forms and schemas, body media
//! kinds and mock answer, and the document's error objects — what a generated handler holds as
//! code, held as data, so `openapi-workspace mock` serves a document without compiling anything.

use std::collections::BTreeSet;

use heck::ToUpperCamelCase;
use openapi_workspace_runtime::mock::{
    AnswerPlan, BodyPlan, CredentialPlan, ErrorObjectPlan, MediaKindPlan, MediaPlan, OperationPlan, ParamPlan,
    PartKindPlan, PartPlan, PartReadPlan, Plan, RequirementPlan, StatusPlan,
};
use serde_json::Value;

mod links;
mod paging;
mod resources;

use crate::error::Result;
use crate::model::error_object::{ErrorObject, Part};
use crate::model::names::TypeKind;
use crate::model::operation::{MediaKind, Op, PartKind, PartRead, Status};
use crate::model::security::{self, Kind, Place, Requirement, Scheme};
use crate::read::{Note, Spec};

/// The plan of `spec`'s operations, and a note for each the engine cannot route (axum's router
/// cannot take its path); its `schemas` are left to the caller (`schema_document`).
pub(crate) fn plan(spec: &Spec) -> Result<(Plan, Vec<Note>)> {
    let schemes = security::schemes(&spec.openapi)?;
    let (error_object, _) = crate::model::error_object::find(&spec.raw);
    // The model names each operation's Rust types; every component is one here (no client is
    // generated, so none was left out).
    let type_names: BTreeSet<String> = spec
        .raw
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|schemas| schemas.keys())
        .map(|name| name.to_upper_camel_case())
        .collect();
    let ops = crate::model::operations(spec, &type_names, &schemes, &error_object)?;
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    // Asked before the operations are routed: a path the document does not have asks for the
    // document's requirement, or its first secured operation's.
    let unknown_path = security::requirement(&spec.openapi, None, &schemes, "#/security")?
        .or_else(|| ops.iter().find_map(|op| op.requirement.clone()))
        .map(|requirement| requirement_plan(&requirement, &schemes));
    let (served, unserved) = crate::model::operation::routed(ops);
    let notes = unserved
        .into_iter()
        .map(|(pointer, why)| Note { pointer, message: format!("not served by the mock: {why}") })
        .collect();
    let mut operations: Vec<OperationPlan> = served
        .iter()
        .map(|op| {
            let raw = spec.raw.pointer(&op.raw).unwrap_or(&Value::Null);
            let own_errors = crate::model::error_object::of_operation(raw, components, &error_object)
                .iter()
                .map(|(status, object)| (status_plan(*status), error_object_plan(object)))
                .collect();
            let mut plan = operation(op, &schemes, own_errors, raw, components);
            plan.refused_as = crate::model::error_object::refusals(op, raw);
            plan.conflict = crate::model::error_object::conflict(raw);
            plan
        })
        .collect();
    // What a stateful mock keeps, from the operations served.
    let (resources, parts) = resources::resources(&served, &spec.raw);
    for (i, part) in parts {
        operations[i].state = Some(part);
    }
    let plan = Plan {
        title: spec.openapi.info.title.clone(),
        // The caller's to give: a generated server has them in `schemas.json` already.
        schemas: Value::Null,
        error_object: error_object_plan(&error_object),
        challenge: security::document_challenge(&spec.openapi, &schemes),
        unknown_path,
        operations,
        resources,
    };
    Ok((plan, notes))
}

fn operation(
    op: &Op,
    schemes: &[Scheme],
    own_errors: Vec<(StatusPlan, ErrorObjectPlan)>,
    raw: &Value,
    components: &Value,
) -> OperationPlan {
    let params = op
        .path_params
        .iter()
        .chain(&op.header_params)
        .chain(&op.cookie_params)
        .chain(&op.query_params)
        .map(|param| ParamPlan {
            wire: param.wire.clone(),
            id: param.wire.place == crate::read::wire::Place::Path && param.kind == TypeKind::Uuid,
            required: param.required,
            default: param.default.clone(),
            schema: crate::model::json_schema::bounded(param.schema.clone()),
        })
        .collect();
    let body = op.body.as_ref().map(|body| BodyPlan {
        required: body.required,
        media: body
            .media
            .iter()
            .map(|media| MediaPlan { media_type: media.media_type.clone(), kind: media_kind(&media.kind) })
            .collect(),
    });
    let answer = op.mock.as_ref().map(|mock| AnswerPlan {
        status: mock.status,
        offered: mock.body.iter().chain(&mock.others).map(|(media, body)| (media.clone(), body.text())).collect(),
        headers: mock.headers.clone(),
        schema: resources::answer_schema(op, raw, components).map(crate::model::json_schema::to_validated_schema),
    });
    OperationPlan {
        operation_id: op.operation_id.clone(),
        method: op.http_method(),
        path: op.path.clone(),
        requirement: op.requirement.as_ref().map(|requirement| requirement_plan(requirement, schemes)),
        params,
        body,
        answer,
        own_errors,
        refused_as: None,
        conflict: None,
        state: None,
    }
}

/// A body's media kind as the engine reads it: the schemas a generated server's validators are
/// compiled from (`write/server/validation.rs`).
fn media_kind(kind: &MediaKind) -> MediaKindPlan {
    match kind {
        MediaKind::Json { schema, .. } => MediaKindPlan::Json(schema.clone()),
        MediaKind::Form { schema, .. } => MediaKindPlan::Form(schema.clone()),
        MediaKind::Multipart { fields, schema, .. } => MediaKindPlan::Multipart {
            parts: fields
                .iter()
                .map(|field| PartReadPlan {
                    name: field.name.clone(),
                    read: match &field.kind {
                        PartKind::File { accepted } | PartKind::Files { accepted } => {
                            PartKindPlan::File(accepted.clone())
                        }
                        PartKind::Value { read: PartRead::Text(leaf), .. } => PartKindPlan::Text(*leaf),
                        PartKind::Value { read: PartRead::Texts(leaf), .. } => PartKindPlan::Texts(*leaf),
                        PartKind::Value { read: PartRead::Json, .. } => PartKindPlan::Json,
                    },
                })
                .collect(),
            schema: crate::model::json_schema::to_validated_schema(schema),
        },
        MediaKind::Text => MediaKindPlan::Text,
        MediaKind::Bytes => MediaKindPlan::Bytes,
    }
}

fn requirement_plan(requirement: &Requirement, schemes: &[Scheme]) -> RequirementPlan {
    let credential = |i: &usize| match &schemes[*i].kind {
        Kind::Bearer => CredentialPlan::Bearer,
        Kind::Basic => CredentialPlan::Basic,
        Kind::ApiKey(Place::Header(name)) => CredentialPlan::Header(name.clone()),
        Kind::ApiKey(Place::Query(name)) => CredentialPlan::Query(name.clone()),
        Kind::ApiKey(Place::Cookie(name)) => CredentialPlan::Cookie(name.clone()),
        Kind::Unsupported(_) => unreachable!("`security::requirement` refuses a scheme the router cannot check"),
    };
    RequirementPlan {
        alternatives: requirement
            .alternatives
            .iter()
            .map(|together| together.iter().map(credential).collect())
            .collect(),
        challenge: requirement.challenge.clone(),
        hint: requirement.hint.clone(),
    }
}

fn status_plan(status: Status) -> StatusPlan {
    match status {
        Status::Code(code) => StatusPlan::Code(code),
        Status::Range(class) => StatusPlan::Class(class),
        Status::Default => StatusPlan::Default,
    }
}

fn error_object_plan(object: &ErrorObject) -> ErrorObjectPlan {
    let parts = object
        .parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => PartPlan::Text(text.clone()),
            Part::Message(None) => PartPlan::Message,
            Part::Message(Some(longest)) => PartPlan::MessageUpTo(*longest as usize),
            Part::Status => PartPlan::Status,
            Part::StatusText => PartPlan::StatusText,
            Part::Reason => PartPlan::Reason,
        })
        .collect();
    ErrorObjectPlan { media: object.media.clone(), parts }
}

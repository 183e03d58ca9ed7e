//! How a [`Query`](crate::reads::Query)'s values go to tokio-postgres: each as the type its value
//! has (a `NULL` is written into the text instead, by `Query::prepared`).

use bytes::BytesMut;
use tokio_postgres::types::{IsNull, ToSql, Type};

use crate::reads::Value;

/// `values` as tokio-postgres takes a statement's parameters.
pub(super) fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|value| value as &(dyn ToSql + Sync)).collect()
}

/// The parameter type a statement is prepared with for `value`.
pub(super) fn type_of(value: &Value) -> Type {
    match value {
        Value::Int(_) => Type::INT8,
        Value::Text(_) => Type::TEXT,
        Value::Uuid(_) => Type::UUID,
        Value::Bool(_) => Type::BOOL,
        // Written into the text as `NULL` (see `Query::prepared`), never bound.
        Value::Null => Type::UNKNOWN,
    }
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Self::Int(value) => value.to_sql(ty, out),
            Self::Text(value) => value.to_sql(ty, out),
            Self::Uuid(value) => value.to_sql(ty, out),
            Self::Bool(value) => value.to_sql(ty, out),
            Self::Null => Ok(IsNull::Yes),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Each value is checked against the parameter's type in `to_sql_checked`.
        true
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Self::Int(value) => value.to_sql_checked(ty, out),
            Self::Text(value) => value.to_sql_checked(ty, out),
            Self::Uuid(value) => value.to_sql_checked(ty, out),
            Self::Bool(value) => value.to_sql_checked(ty, out),
            Self::Null => Ok(IsNull::Yes),
        }
    }
}

//! Rows read as records: the [`Cells`] both backends' rows answer, and the conversions of what
//! the schemas store (times in microseconds, amounts, JSON) back into the API's values.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

use crate::{Keyed, Result, StoreError};

/// A row, as the records are read from it: the backends' rows answer alike.
pub trait Cells {
    fn int(&self, column: &str) -> Result<i64>;
    fn opt_int(&self, column: &str) -> Result<Option<i64>>;
    fn text(&self, column: &str) -> Result<String>;
    fn opt_text(&self, column: &str) -> Result<Option<String>>;
    fn uuid(&self, column: &str) -> Result<Uuid>;
    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>>;

    /// A text column as its enum or constrained string type.
    fn parsed<T: FromStr>(&self, column: &str) -> Result<T> {
        let text = self.text(column)?;
        text.parse().map_err(|_| corrupt(column, &text))
    }

    fn parsed_opt<T: FromStr>(&self, column: &str) -> Result<Option<T>> {
        self.opt_text(column)?.map(|t| t.parse().map_err(|_| corrupt(column, &t))).transpose()
    }

    fn amount(&self, column: &str) -> Result<types::Amount> {
        amount_in(column, self.int(column)?)
    }

    fn opt_amount(&self, column: &str) -> Result<Option<types::Amount>> {
        self.opt_int(column)?.map(|value| amount_in(column, value)).transpose()
    }

    fn json<T: serde::de::DeserializeOwned>(&self, column: &str) -> Result<T> {
        let text = self.text(column)?;
        serde_json::from_str(&text).map_err(|_| corrupt(column, &text))
    }

    fn instant(&self, column: &str) -> Result<DateTime<Utc>> {
        instant(self.int(column)?)
    }
}

/// [`Cells`] for a backend's row type, whose `get` reads a column by name as any type the
/// driver decodes (`tokio_postgres::Row::try_get`, `rusqlite::Row::get`).
macro_rules! cells {
    ($row:ty, $get:path) => {
        impl $crate::reads::Cells for $row {
            fn int(&self, column: &str) -> $crate::Result<i64> {
                Ok($get(self, column)?)
            }
            fn opt_int(&self, column: &str) -> $crate::Result<Option<i64>> {
                Ok($get(self, column)?)
            }
            fn text(&self, column: &str) -> $crate::Result<String> {
                Ok($get(self, column)?)
            }
            fn opt_text(&self, column: &str) -> $crate::Result<Option<String>> {
                Ok($get(self, column)?)
            }
            fn uuid(&self, column: &str) -> $crate::Result<uuid::Uuid> {
                Ok($get(self, column)?)
            }
            fn opt_uuid(&self, column: &str) -> $crate::Result<Option<uuid::Uuid>> {
                Ok($get(self, column)?)
            }
        }
    };
}
pub(crate) use cells;

/// A row's record, with its `tenant_id`.
pub(crate) fn owned<R: Cells, T>(row: &R, decode: fn(&R) -> Result<T>) -> Result<(crate::TenantId, T)> {
    Ok((crate::TenantId(row.int("tenant_id")?), decode(row)?))
}

pub(crate) fn micros(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_micros()
}

pub(crate) fn instant(micros: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros).ok_or_else(|| corrupt("time", micros))
}

/// A stored amount as the API's: `1..`, else the column is corrupt.
fn amount_in(column: &str, value: i64) -> Result<types::Amount> {
    u64::try_from(value).ok().and_then(types::Amount::new).ok_or_else(|| corrupt(column, value))
}

/// A stored value that does not parse: the database holds something this code never wrote.
pub(crate) fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Corrupt { what: what.to_owned(), value: format!("{value:?}") }
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|source| StoreError::Encode { what: std::any::type_name::<T>(), source: std::sync::Arc::new(source) })
}

pub(crate) fn amount_value(amount: &types::Amount) -> Result<i64> {
    i64::try_from(amount.get()).map_err(|_| StoreError::TooLarge { what: "amount", value: amount.get().to_string() })
}

/// A keyed resource's row (its columns and `request`, the request that used the key).
pub(crate) fn keyed<R: Cells, T>(row: &R, record: fn(&R) -> Result<T>) -> Result<Keyed<T>> {
    Ok(Keyed { request: row.text("request")?, resource: record(row)? })
}

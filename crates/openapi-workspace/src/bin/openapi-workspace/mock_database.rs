//! `openapi-workspace mock --stateful --database FILE`: the mock's items in an SQLite file, so
//! they outlive the process. Each change is written, and synced, before the mock makes it and
//! answers (the runtime's `Keep`), so an answered change survives a crash; a restart serves what
//! was kept, its sequences going on. `items` holds each item's JSON by collection route, scope
//! and id, in the order made (their rowids: an update keeps its own); `keys` each idempotency
//! key's first body and answer; `seeded` says the file was seeded once (an empty file is seeded
//! at start, a kept one never again but by a reset).

use std::path::Path;
use std::sync::Mutex;

use openapi_workspace_runtime::mock::{Change, Keep, KeepError, Kept, KeptItem};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS items (
        collection TEXT NOT NULL, scope TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (collection, scope, id));
    CREATE TABLE IF NOT EXISTS keys (
        collection TEXT NOT NULL, key TEXT NOT NULL, body TEXT, answer TEXT NOT NULL,
        PRIMARY KEY (collection, key));
    CREATE TABLE IF NOT EXISTS seeded (at INTEGER NOT NULL);";

/// A scope's values as one text, each ended by U+001F (no path parameter's text holds one), so
/// that a scope's prefix is its text's prefix.
fn scope_text(scope: &[String]) -> String {
    scope.iter().flat_map(|value| [value.as_str(), "\u{1f}"]).collect()
}

fn scope_of(text: &str) -> Vec<String> {
    text.split_terminator('\u{1f}').map(str::to_owned).collect()
}

#[derive(Debug)]
pub(crate) struct Database {
    connection: Mutex<Connection>,
}

impl Database {
    pub(crate) fn open(path: &Path) -> Result<Self, KeepError> {
        let connection = Connection::open(path).map_err(failed)?;
        // WAL with a sync at each commit: an answered change is on disk.
        connection
            .execute_batch(&format!("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; {SCHEMA}"))
            .map_err(failed)?;
        Ok(Self { connection: Mutex::new(connection) })
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn failed(error: impl std::fmt::Display) -> KeepError {
    KeepError(error.to_string())
}

fn put(connection: &Connection, item: &KeptItem) -> rusqlite::Result<usize> {
    connection.execute(
        "INSERT INTO items (collection, scope, id, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (collection, scope, id) DO UPDATE SET value = excluded.value",
        params![item.collection, scope_text(&item.scope), item.id, item.value.to_string()],
    )
}

impl Keep for Database {
    fn load(&self) -> Result<Option<Kept>, KeepError> {
        let connection = self.connection();
        let seeded: Option<i64> =
            connection.query_row("SELECT at FROM seeded", [], |row| row.get(0)).optional().map_err(failed)?;
        if seeded.is_none() {
            return Ok(None);
        }
        let json = |text: String| serde_json::from_str::<Value>(&text).map_err(failed);
        let mut kept = Kept::default();
        let mut statement =
            connection.prepare("SELECT collection, scope, id, value FROM items ORDER BY rowid").map_err(failed)?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get::<_, String>(1)?, row.get(2)?, row.get::<_, String>(3)?)))
            .map_err(failed)?;
        for row in rows {
            let (collection, scope, id, value) = row.map_err(failed)?;
            kept.items.push(KeptItem { collection, scope: scope_of(&scope), id, value: json(value)? });
        }
        let mut statement = connection.prepare("SELECT collection, key, body, answer FROM keys").map_err(failed)?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get::<_, Option<String>>(2)?, row.get::<_, String>(3)?))
            })
            .map_err(failed)?;
        for row in rows {
            let (collection, key, body, answer) = row.map_err(failed)?;
            let body = body.map(json).transpose()?;
            kept.keys.push((collection, key, body, json(answer)?));
        }
        Ok(Some(kept))
    }

    fn reset(&self, items: &[KeptItem]) -> Result<(), KeepError> {
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(failed)?;
        transaction.execute_batch("DELETE FROM items; DELETE FROM keys; DELETE FROM seeded;").map_err(failed)?;
        for item in items {
            put(&transaction, item).map_err(failed)?;
        }
        transaction.execute("INSERT INTO seeded (at) VALUES (unixepoch())", []).map_err(failed)?;
        transaction.commit().map_err(failed)
    }

    fn change(&self, change: Change<'_>) -> Result<(), KeepError> {
        let mut connection = self.connection();
        let transaction = connection.transaction().map_err(failed)?;
        match change {
            Change::Put { item, key } => {
                put(&transaction, item).map_err(failed)?;
                if let Some((key, body)) = key {
                    transaction
                        .execute(
                            "INSERT INTO keys (collection, key, body, answer) VALUES (?1, ?2, ?3, ?4)",
                            params![item.collection, key, body.as_ref().map(Value::to_string), item.value.to_string()],
                        )
                        .map_err(failed)?;
                }
            }
            Change::Remove { collection, scope, id, nested, under } => {
                transaction
                    .execute(
                        "DELETE FROM items WHERE collection = ?1 AND scope = ?2 AND id = ?3",
                        params![collection, scope_text(scope), id],
                    )
                    .map_err(failed)?;
                let under = scope_text(under);
                for nested in nested {
                    transaction
                        .execute(
                            "DELETE FROM items WHERE collection = ?1 AND substr(scope, 1, length(?2)) = ?2",
                            params![nested, under],
                        )
                        .map_err(failed)?;
                }
            }
        }
        transaction.commit().map_err(failed)
    }
}

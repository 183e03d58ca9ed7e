//! Running a backend's migrations (SQL files embedded in the binary), and what a refusal means
//! for the person starting the sandbox.

use std::borrow::Cow;

use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};

use crate::OpenError;

/// A backend's migrations, in order: version, description, SQL.
pub type Migrations = &'static [(i64, &'static str, &'static str)];

pub fn migrator(migrations: Migrations) -> Migrator {
    Migrator::with_migrations(
        migrations
            .iter()
            .map(|(version, description, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*description),
                    MigrationType::Simple,
                    sqlx::SqlSafeStr::into_sql_str(*sql),
                    false,
                )
            })
            .collect(),
    )
}

/// A failed migration of `database` as one line that says what to do (`fresh`: how to start
/// over, e.g. "give --database a new file").
pub fn explain(database: &str, migrations: Migrations, fresh: &str, error: MigrateError) -> OpenError {
    let latest = migrations.last().map_or(0, |(version, ..)| *version);
    OpenError::refused(match error {
        MigrateError::VersionMissing(version) => format!(
            "{database} was written by a newer payments-sandbox (its schema has migration {version}; this release \
             knows 1 to {latest}): run that release, or {fresh}"
        ),
        MigrateError::VersionMismatch(version) => format!(
            "{database} was migrated by a different build of payments-sandbox (its migration {version} differs from \
             this release's): run that build, or {fresh}"
        ),
        MigrateError::Dirty(version) => format!(
            "{database}: migration {version} was interrupted and left the database unusable: restore a backup, or \
             {fresh}"
        ),
        other => return OpenError::failed(format!("cannot migrate {database} (it was left as it was)"), other),
    })
}

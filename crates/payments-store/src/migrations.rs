//! Running a backend's migrations (SQL files embedded in the binary), one mechanism for both:
//! which migrations a database still needs, or why it cannot take them, is decided here from
//! the history the database keeps ([`pending`]); each backend reads that history and runs what
//! is needed on its own driver ([`run_sqlite`], [`run_postgres`]), each migration in a
//! transaction with its line of history, so one that fails leaves nothing of itself.
//!
//! The history is the table sqlx's migrator kept, `_sqlx_migrations`, read and written as it
//! did (a migration's checksum is the SHA-384 of its SQL; PostgreSQL's migration lock is sqlx's
//! advisory lock): every database made by an earlier release has it, and those releases and
//! this one must each see the other's migrations as their own.

use std::time::Instant;

use sha2::{Digest, Sha384};

use crate::OpenError;

/// A backend's migrations, in order: version, description, SQL.
pub(crate) type Migrations = &'static [(i64, &'static str, &'static str)];

/// The table of a database's migration history.
const CREATE_HISTORY: &str = "CREATE TABLE IF NOT EXISTS _sqlx_migrations (
    version BIGINT PRIMARY KEY,
    description TEXT NOT NULL,
    installed_on {TIME} NOT NULL DEFAULT {NOW},
    success BOOLEAN NOT NULL,
    checksum {BYTES} NOT NULL,
    execution_time BIGINT NOT NULL
)";
const READ_HISTORY: &str = "SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version";

/// A migration the database's history records.
struct Applied {
    version: i64,
    checksum: Vec<u8>,
    /// False when it was interrupted.
    success: bool,
}

/// Why a database cannot take this release's migrations; nothing of it was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Its history has a migration this release does not know.
    Newer(i64),
    /// Its migration of that version is not this release's.
    Different(i64),
    /// That migration was begun and never finished.
    Interrupted(i64),
}

fn checksum(sql: &str) -> Vec<u8> {
    Sha384::digest(sql.as_bytes()).to_vec()
}

/// The migrations of `migrations` that a database whose history is `applied` still needs, in
/// order; or why it cannot take them (an interruption first, then a version this release does
/// not know, then one that differs).
fn pending(migrations: Migrations, applied: &[Applied]) -> Result<Vec<(i64, &'static str, &'static str)>, Refusal> {
    if let Some(interrupted) = applied.iter().filter(|a| !a.success).map(|a| a.version).min() {
        return Err(Refusal::Interrupted(interrupted));
    }
    if let Some(unknown) = applied.iter().find(|a| !migrations.iter().any(|(version, ..)| *version == a.version)) {
        return Err(Refusal::Newer(unknown.version));
    }
    let mut needed = Vec::new();
    for &(version, description, sql) in migrations {
        match applied.iter().find(|a| a.version == version) {
            Some(applied) if applied.checksum != checksum(sql) => return Err(Refusal::Different(version)),
            Some(_) => {}
            None => needed.push((version, description, sql)),
        }
    }
    Ok(needed)
}

/// What a [`Refusal`] of `database` means to the person starting the sandbox (`fresh`: how to
/// start over, e.g. "give --database a new file").
fn explain(database: &str, migrations: Migrations, fresh: &str, refusal: Refusal) -> OpenError {
    let latest = migrations.last().map_or(0, |(version, ..)| *version);
    OpenError::refused(match refusal {
        Refusal::Newer(version) => format!(
            "{database} was written by a newer payments-sandbox (its schema has migration {version}; this release \
             knows 1 to {latest}): run that release, or {fresh}"
        ),
        Refusal::Different(version) => format!(
            "{database} was migrated by a different build of payments-sandbox (its migration {version} differs from \
             this release's): run that build, or {fresh}"
        ),
        Refusal::Interrupted(version) => format!(
            "{database}: migration {version} was interrupted and left the database unusable: restore a backup, or \
             {fresh}"
        ),
    })
}

fn failed(database: &str) -> impl Fn(Box<dyn std::error::Error + Send + Sync>) -> OpenError + '_ {
    move |error| OpenError::failed(format!("cannot migrate {database} (it was left as it was)"), error)
}

/// Runs `migrations` on a SQLite `connection` to the database `database` (as shown to people).
pub(crate) fn run_sqlite(
    connection: &mut rusqlite::Connection,
    migrations: Migrations,
    database: &str,
    fresh: &str,
) -> Result<(), OpenError> {
    let failed = |e: rusqlite::Error| failed(database)(e.into());
    let create = CREATE_HISTORY.replace("{TIME}", "TIMESTAMP").replace("{NOW}", "CURRENT_TIMESTAMP");
    connection.execute_batch(&create.replace("{BYTES}", "BLOB")).map_err(failed)?;
    let applied = connection
        .prepare(READ_HISTORY)
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok(Applied { version: row.get(0)?, checksum: row.get(1)?, success: row.get(2)? }))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(failed)?;
    let needed = pending(migrations, &applied).map_err(|refusal| explain(database, migrations, fresh, refusal))?;
    for (version, description, sql) in needed {
        let started = Instant::now();
        let transaction =
            connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(failed)?;
        transaction.execute_batch(sql).map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                 VALUES (?1, ?2, TRUE, ?3, -1)",
                rusqlite::params![version, description, checksum(sql)],
            )
            .map_err(failed)?;
        transaction.commit().map_err(failed)?;
        connection
            .execute(
                "UPDATE _sqlx_migrations SET execution_time = ?1 WHERE version = ?2",
                rusqlite::params![elapsed_nanos(started), version],
            )
            .map_err(failed)?;
    }
    Ok(())
}

/// Runs `migrations` on a PostgreSQL `client` to the database `database` (as shown to people),
/// under the migration lock, so that instances started at once migrate once.
pub(crate) async fn run_postgres(
    client: &mut tokio_postgres::Client,
    migrations: Migrations,
    database: &str,
    fresh: &str,
) -> Result<(), OpenError> {
    let failed = |e: tokio_postgres::Error| failed(database)(e.into());
    let name: String = client.query_one("SELECT current_database()", &[]).await.map_err(failed)?.get(0);
    let lock = lock_id(&name);
    client.execute("SELECT pg_advisory_lock($1)", &[&lock]).await.map_err(failed)?;
    let migrated = async {
        let create = CREATE_HISTORY.replace("{TIME}", "TIMESTAMPTZ").replace("{NOW}", "now()");
        client.batch_execute(&create.replace("{BYTES}", "BYTEA")).await.map_err(failed)?;
        let applied = client
            .query(READ_HISTORY, &[])
            .await
            .map_err(failed)?
            .iter()
            .map(|row| Ok(Applied { version: row.try_get(0)?, checksum: row.try_get(1)?, success: row.try_get(2)? }))
            .collect::<Result<Vec<_>, tokio_postgres::Error>>()
            .map_err(failed)?;
        let needed = pending(migrations, &applied).map_err(|refusal| explain(database, migrations, fresh, refusal))?;
        for (version, description, sql) in needed {
            let started = Instant::now();
            let transaction = client.transaction().await.map_err(failed)?;
            transaction.batch_execute(sql).await.map_err(failed)?;
            transaction
                .execute(
                    "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                     VALUES ($1, $2, TRUE, $3, -1)",
                    &[&version, &description, &checksum(sql)],
                )
                .await
                .map_err(failed)?;
            transaction.commit().await.map_err(failed)?;
            client
                .execute(
                    "UPDATE _sqlx_migrations SET execution_time = $1 WHERE version = $2",
                    &[&elapsed_nanos(started), &version],
                )
                .await
                .map_err(failed)?;
        }
        Ok(())
    }
    .await;
    // Also released when the connection closes, which follows at once.
    let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&lock]).await;
    migrated
}

/// The advisory lock held while a PostgreSQL database is migrated: sqlx's, so that an instance
/// of an earlier release started at the same moment waits for this one, and the other way round.
fn lock_id(database: &str) -> i64 {
    0x3d32_ad9e * i64::from(crc32fast::hash(database.as_bytes()))
}

fn elapsed_nanos(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIGRATIONS: Migrations = &[(1, "one", "CREATE TABLE a (x INT)"), (2, "two", "CREATE TABLE b (y INT)")];

    fn applied(version: i64, sql: &str, success: bool) -> Applied {
        Applied { version, checksum: checksum(sql), success }
    }

    #[test]
    fn a_database_takes_what_it_has_not_had() {
        let versions = |found: Vec<(i64, &str, &str)>| found.iter().map(|(v, ..)| *v).collect::<Vec<_>>();
        assert_eq!(versions(pending(MIGRATIONS, &[]).unwrap()), [1, 2]);
        assert_eq!(versions(pending(MIGRATIONS, &[applied(1, MIGRATIONS[0].2, true)]).unwrap()), [2]);
        let both = [applied(1, MIGRATIONS[0].2, true), applied(2, MIGRATIONS[1].2, true)];
        assert!(pending(MIGRATIONS, &both).unwrap().is_empty());
    }

    #[test]
    fn refusals_name_the_migration() {
        let newer = [applied(1, MIGRATIONS[0].2, true), applied(9, "x", true)];
        assert_eq!(pending(MIGRATIONS, &newer).unwrap_err(), Refusal::Newer(9));
        let different = [applied(1, "CREATE TABLE a (x TEXT)", true)];
        assert_eq!(pending(MIGRATIONS, &different).unwrap_err(), Refusal::Different(1));
        // An interruption is named before anything else.
        let interrupted = [applied(1, "other", true), applied(2, MIGRATIONS[1].2, false), applied(9, "x", true)];
        assert_eq!(pending(MIGRATIONS, &interrupted).unwrap_err(), Refusal::Interrupted(2));
    }

    /// The checksums sqlx's migrator recorded for each backend's migrations, read off databases
    /// it migrated (at 488baed, the last release it ran): a database migrated by an earlier
    /// release is this one's, not one "migrated by a different build".
    #[test]
    fn checksums_are_those_earlier_releases_recorded() {
        const SQLITE: [&str; 11] = [
            "f737b035ea03280d308488be2b868c9062cc0882423c66496fc6affb3fc9fd12c955a0a9352f67beebaab6c7254d050c",
            "40a463a5804a65a5d6916fd214c1481598320897717674316f0042521952fa86e594040e699bc8b869b4b19b183e6ed4",
            "eeb3b298d34ba38975ae38de39ca73db3a35988dc5809c084d3fdac342dce957dd593d5ced7b13a24965681d1bcf3fd1",
            "80c92c71198541064dc3717f8ece9f47ea186735e3ce9111db6f349bd9452d4cb38ff868eef2595cecb53bad9ae1d0f3",
            "940ae2862894fa0483707769639fdcba8c6d21fb0a6d603282446937dd915f1650f652c491940d7f96df78d0aebc4794",
            "a60acdc9443ddd261ee75846e5b8bd86b0ec2442745955ff780a810ba2699609ecaf2642b289c0745cdde34d8c4627bc",
            "446664d32e7aa8ba91afcb59baa6214d552482d25c8c83e47862f5f96272c2396d31bad98c5a95246a099afef964e8af",
            "e297e1a168ec28a7e5745c1d5206ddedc31f716b3d5234c8b998a1cea201234cdd181b9c92cc0e1c85d48f58a2b8b377",
            "d4a519381bb9d24d18021cd337a87f53d5832170e2b9cb1322b2902bb7002818d6783f7af5e4855634145e696ce54c4a",
            "bbd1d7f572894a0d25579477313f3aa2aeef5719bad78be669f498c96b5080ff934d91378fe67533443258f52326a624",
            "f003552c94c6b4ce5d0371f409f845ee9cf37137c722e96c1f26a62ada443911e989f9d85a8dbc4febe699b997851d28",
        ];
        const POSTGRES: [&str; 6] = [
            "0302c5312ec8db5106fd47dbf4c7f90bd911c56880999c9e6fb46bc5b0fc84e678be03530ab065164c32be014f78b2d9",
            "223133b656a3dc1a2861da9b8a8775acd0067b40f3f8852cbeca14cf4573e2de4f6a7a1e730e7c113860454f7b7fa66d",
            "39f456eb3e0b9ac3222da88ebd54d04f551fb916d704d38f5cc37e52d582b5ee82cccccabcb89201fa263c51a8267eb0",
            "c90b69a4c5eb1201f1f420a980b2fc6025898348058612dbeb0c4b856f09433e855352dbcfc8ff26075a914349894153",
            "52f6f1ea69e9f87bfac16ef3d42f162b6a4a1c33a8dd6d9a28f70a3eb975c0d781c2101e81be0b7b6891bd04f100a1d3",
            "36facd4d865922bd734f2776011a78199e448d6bbd36ebfc3a6fccc487f60b1c1e22087a8233017cb7887eca787a1177",
        ];
        for (migrations, recorded) in
            [(crate::sqlite::MIGRATIONS, &SQLITE[..]), (crate::postgres::MIGRATIONS, &POSTGRES[..])]
        {
            let ours: Vec<String> = migrations.iter().map(|(.., sql)| hex(&checksum(sql))).collect();
            assert_eq!(ours, recorded);
        }
    }

    /// sqlx's lock: its constant times the CRC-32 (IEEE) of the database's name.
    #[test]
    fn the_migration_lock_is_sqlxs() {
        assert_eq!(lock_id("payments"), 0x3d32_ad9e * 0x65d2_9b32);
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

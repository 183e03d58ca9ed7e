//! Every list is one range of one index read newest first (searches: the search table's matches,
//! newest first), never a table scan, never a sort: checked on SQLite's own plans for the queries
//! the store builds — on a new database, and again with the statistics `PRAGMA optimize` would
//! gather on a big one (four tenants of a quarter of a million rows each), since statistics change
//! the planner's mind.

use chrono::Utc;
use payments_types as types;
use rusqlite::Connection;
use uuid::Uuid;

use super::*;
use crate::reads::Searched;

/// SQLite's plan for `query`: one line per step. Parameters are left unbound; the plan does
/// not depend on their values.
fn plan(connection: &Connection, query: Query<Sqlite>) -> Vec<String> {
    let mut sql = String::new();
    query.write_positional(&mut sql);
    explain(connection, &sql)
}

/// SQLite's plan for the statement `sql`, its parameters unbound.
fn explain(connection: &Connection, sql: &str) -> Vec<String> {
    let mut statement = connection.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let mut rows = statement.raw_query();
    let mut steps = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        steps.push(row.get(3).unwrap());
    }
    steps
}

/// The plan reads `table` through an index (`index`, when given) and neither scans nor sorts.
fn assert_indexed(steps: &[String], table: &str, index: Option<&str>, what: &str) {
    let searched = |s: &String| {
        let by = [format!("SEARCH {table} USING INDEX "), format!("SEARCH {table} USING COVERING INDEX ")];
        by.iter().any(|prefix| {
            s.strip_prefix(prefix.as_str()).is_some_and(|rest| index.is_none_or(|i| rest.starts_with(&format!("{i} "))))
        })
    };
    assert!(steps.iter().any(searched), "{what}: expected a search of {table} through {index:?}, got {steps:?}");
    assert!(!steps.iter().any(|s| s.starts_with(&format!("SCAN {table}"))), "{what} scans {table}: {steps:?}");
    assert!(!steps.iter().any(|s| s.contains("TEMP B-TREE")), "{what} sorts: {steps:?}");
}

/// The plan reads the search table's matches (newest first) and finds each row by its key; for
/// transactions, beside them the rows waiting to be indexed, likewise through their key. What
/// is sorted, if anything, is a subquery's page (to merge two pages), never a table's rows.
fn assert_search_driven(steps: &[String], search_table: &str, table: &str, what: &str) {
    let by_key = format!("SEARCH {table} USING INTEGER PRIMARY KEY (rowid=?)");
    let followed_by_key =
        |first: &dyn Fn(&str) -> bool| steps.windows(2).any(|pair| first(&pair[0]) && pair[1] == by_key);
    assert!(followed_by_key(&|s| s.starts_with("SCAN s VIRTUAL TABLE")), "{what}: {steps:?} ({search_table})");
    if table == "t" {
        let waiting = |s: &str| s == "SCAN p" || s.starts_with("SEARCH p USING INTEGER PRIMARY KEY");
        assert!(followed_by_key(&waiting), "{what}: the waiting rows: {steps:?}");
    }
    for (i, step) in steps.iter().enumerate() {
        if step.contains("TEMP B-TREE") {
            assert!(i > 0 && steps[i - 1].starts_with("SCAN (subquery-"), "{what} sorts a table's rows: {steps:?}");
        }
    }
}

/// Statistics as `ANALYZE` would gather them on a database of a million rows in every table,
/// shared by four big tenants: each index narrows to a quarter by tenant, a fifth per further
/// column, one row when unique.
fn big_tenant_statistics(connection: &Connection) {
    connection.execute_batch("ANALYZE").unwrap();
    let indexes: Vec<(String, String, bool)> = connection
        .prepare(
            "SELECT m.name, i.name, i.\"unique\" FROM sqlite_schema m, pragma_index_list(m.name) i WHERE m.type = 'table'",
        )
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for (table, index, unique) in indexes {
        let columns: i64 =
            connection.query_row("SELECT count(*) FROM pragma_index_info(?1)", [&index], |row| row.get(0)).unwrap();
        let mut stat = vec!["1000000".to_owned()];
        for column in 1..=columns {
            let rows = if unique && column == columns { 1 } else { 250_000 / 5_i64.pow((column - 1) as u32) };
            stat.push(rows.to_string());
        }
        connection
            .execute("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?1, ?2, ?3)", [&table, &index, &stat.join(" ")])
            .unwrap();
    }
    connection.execute_batch("ANALYZE sqlite_schema").unwrap();
}

/// A connection to a new database the store opened (and so migrated), in a directory that lasts
/// as long as the first half.
async fn migrated() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plans.db");
    drop(SqliteStore::open(path.to_str().unwrap()).await.unwrap());
    let connection = Connection::open(&path).unwrap();
    (dir, connection)
}

fn page() -> Page {
    Page { limit: 10, starting_after: None }
}

#[tokio::test]
async fn every_list_is_an_index_range_read_newest_first() {
    let (_dir, connection) = migrated().await;
    for statistics in [false, true] {
        if statistics {
            big_tenant_statistics(&connection);
        }
        check_plans(&connection, statistics);
    }
}

fn check_plans(connection: &Connection, statistics: bool) {
    let when = if statistics { " (with big tenants' statistics)" } else { "" };
    // Without statistics the planner takes the filter's own index; with them it may take another
    // index of the table (also read newest first): either way, no scan and no sort.
    let expect = |index: &'static str| if statistics { None } else { Some(index) };
    let tenant = TenantId(1);
    let id = Some(Uuid::nil());
    let text = Some("x".to_owned());
    let after = Some(1);

    let filters: Vec<(&str, &str, TransactionFilter)> = vec![
        ("none", "transactions_list", TransactionFilter::default()),
        ("order_id", "transactions_order_id", TransactionFilter { order_id: text.clone(), ..Default::default() }),
        ("recipient_id", "transactions_by_recipient", TransactionFilter { recipient_id: id, ..Default::default() }),
        (
            "recipient_country",
            "transactions_by_recipient_country",
            TransactionFilter { recipient_country: text.clone(), ..Default::default() },
        ),
        ("balance_id", "transactions_by_balance", TransactionFilter { balance_id: id, ..Default::default() }),
        (
            "virtual_account_id",
            "transactions_by_virtual_account",
            TransactionFilter { virtual_account_id: id, ..Default::default() },
        ),
        (
            "scheduled_payment_id",
            "transactions_by_scheduled_payment",
            TransactionFilter { scheduled_payment_id: id, ..Default::default() },
        ),
        (
            "transaction_type",
            "transactions_by_type",
            TransactionFilter { transaction_type: Some(types::TransactionType::Payment), ..Default::default() },
        ),
        ("currency", "transactions_by_currency", TransactionFilter { currency: text.clone(), ..Default::default() }),
        (
            "to_currency",
            "transactions_by_to_currency",
            TransactionFilter { to_currency: text.clone(), ..Default::default() },
        ),
        (
            "status",
            "transactions_by_status",
            TransactionFilter { status: Some(types::TransactionStatus::Processed), ..Default::default() },
        ),
        (
            "from_datetime",
            "transactions_list",
            TransactionFilter { created_from: Some(Utc::now()), ..Default::default() },
        ),
        (
            "to_datetime",
            "transactions_list",
            TransactionFilter { created_before: Some(Utc::now()), ..Default::default() },
        ),
    ];
    for (what, index, filter) in filters {
        for start in [None, after] {
            let steps = plan(connection, reads::transactions::list(tenant, &filter, start, page()));
            assert_indexed(&steps, "t", expect(index), &format!("transactions by {what}{when}"));
        }
    }
    for needle in ["invoice", "in"] {
        for (filter, index) in [
            (TransactionFilter { search: Some(needle.into()), ..Default::default() }, expect("transactions_list")),
            (
                TransactionFilter {
                    search: Some(needle.into()),
                    status: Some(types::TransactionStatus::Processed),
                    created_from: Some(Utc::now()),
                    ..Default::default()
                },
                // Either of two ranges: the status's, or the tenant's from that moment on.
                None,
            ),
        ] {
            for start in [None, after] {
                let steps = plan(connection, reads::transactions::list(tenant, &filter, start, page()));
                let what = format!("search {needle:?}{when}");
                // A needle shorter than a trigram is looked for in the tenant's transactions.
                match needle.len() {
                    3.. => assert_search_driven(&steps, "transaction_search", "t", &what),
                    _ => assert_indexed(&steps, "t", index, &what),
                }
            }
        }
    }

    let filters: Vec<(&str, PaymentRequestFilter)> = vec![
        ("payment_requests_list", PaymentRequestFilter::default()),
        ("payment_requests_reference_id", PaymentRequestFilter { reference_id: text.clone(), ..Default::default() }),
        ("payment_requests_by_currency", PaymentRequestFilter { currency: text.clone(), ..Default::default() }),
        ("payment_requests_by_balance", PaymentRequestFilter { settlement_balance_id: id, ..Default::default() }),
        (
            "payment_requests_by_status",
            PaymentRequestFilter { status: Some(types::PaymentRequestStatus::Initiated), ..Default::default() },
        ),
    ];
    for (index, filter) in filters {
        let steps = plan(connection, reads::payment_requests::list(tenant, &filter, after, page()));
        assert_indexed(&steps, "payment_requests", expect(index), &format!("payment requests through {index}{when}"));
    }

    let filters: Vec<(&str, VirtualAccountFilter)> = vec![
        ("virtual_accounts_list", VirtualAccountFilter::default()),
        ("virtual_accounts_reference_id", VirtualAccountFilter { reference_id: text.clone(), ..Default::default() }),
        ("virtual_accounts_by_currency", VirtualAccountFilter { currency: text.clone(), ..Default::default() }),
        ("virtual_accounts_by_balance", VirtualAccountFilter { settlement_balance_id: id, ..Default::default() }),
        (
            "virtual_accounts_by_status",
            VirtualAccountFilter { status: Some(types::VirtualAccountStatus::Active), ..Default::default() },
        ),
    ];
    for (index, filter) in filters {
        let steps = plan(connection, reads::virtual_accounts::list(tenant, &filter, after, page()));
        assert_indexed(&steps, "v", expect(index), &format!("virtual accounts through {index}{when}"));
    }
    let search = VirtualAccountFilter { search: Some("sandbox".into()), ..Default::default() };
    let steps = plan(connection, reads::virtual_accounts::list(tenant, &search, after, page()));
    assert_search_driven(&steps, "virtual_account_search", "v", &format!("virtual accounts by search{when}"));

    for (index, filter) in [
        ("balances_list", BalanceFilter::default()),
        ("balances_by_currency", BalanceFilter { currency: text.clone() }),
    ] {
        let steps = plan(connection, reads::balances::list(tenant, &filter, after, page()));
        assert_indexed(&steps, "balances", expect(index), &format!("balances through {index}{when}"));
    }

    let filters = [
        ("notifications_list", NotificationFilter::default()),
        ("notifications_by_endpoint", NotificationFilter { endpoint_id: id, ..Default::default() }),
        ("notifications_list", NotificationFilter { created_from: Some(Utc::now()), ..Default::default() }),
    ];
    for (index, filter) in filters {
        let steps = plan(connection, reads::webhooks::notification_list(tenant, &filter, after, page()));
        assert_indexed(&steps, "notifications", expect(index), &format!("notifications through {index}{when}"));
    }

    // The rails: one tenant's through its status index, everyone's through the partial index.
    for status in [types::TransactionStatus::Initiated, types::TransactionStatus::Processing] {
        let steps = plan(connection, reads::transactions::on_rails(Some(tenant), status));
        assert_indexed(&steps, "transactions", expect("transactions_by_status"), &format!("one tenant's rails{when}"));
        let steps = plan(connection, reads::transactions::on_rails(None, status));
        assert_indexed(&steps, "transactions", Some("transactions_on_rails"), &format!("the rails{when}"));
    }
    let steps = plan(connection, reads::virtual_accounts::initiated(Some(tenant)));
    assert_indexed(
        &steps,
        "virtual_accounts",
        expect("virtual_accounts_by_status"),
        &format!("one tenant's accounts{when}"),
    );
    let steps = plan(connection, reads::virtual_accounts::initiated(None));
    assert_indexed(
        &steps,
        "virtual_accounts",
        Some("virtual_accounts_on_rails"),
        &format!("accounts to activate{when}"),
    );

    // The delivery worker's look for due endpoints: seeks in the index of pending
    // notifications, never a read of every due one. (The first endpoint is the index's first
    // entry: a scan of it that `LIMIT 1` stops at once.)
    let steps = plan(connection, reads::webhooks::due_endpoints(Utc::now()));
    let scans = |s: &&String| ["SCAN n", "SCAN d", "SCAN notifications"].iter().any(|t| s.starts_with(t));
    assert!(
        !steps.iter().filter(scans).any(|s| !s.contains("INDEX notifications_due")),
        "due endpoints{when} scan the notifications: {steps:?}"
    );
    assert!(
        steps.iter().filter(|s| s.contains("USING") && s.contains("INDEX notifications_due")).count() >= 2,
        "due endpoints{when} do not seek notifications_due: {steps:?}"
    );
}

/// FTS5 reads and deletes its segments by key ranges at nearly every commit; whatever the
/// statistics say of its tables' size, those must stay seeks (a scan of the whole index per
/// commit once capped payments at a tenth of their rate). Checked after a first and a second
/// start, each of which gathers statistics.
#[tokio::test]
async fn the_search_indexes_own_statements_seek() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("search.db");
    for _start in 0..2 {
        drop(SqliteStore::open(path.to_str().unwrap()).await.unwrap());
        let connection = Connection::open(&path).unwrap();
        for searched in [Searched::Transactions, Searched::VirtualAccounts] {
            let table = format!("{}_data", codec::search_table(searched));
            for statement in [
                format!("DELETE FROM '{table}' WHERE id>=? AND id<=?"),
                format!("SELECT block FROM '{table}' WHERE id>=? AND id<=?"),
            ] {
                let steps = explain(&connection, &statement);
                assert!(
                    steps.iter().all(|s| s.starts_with(&format!("SEARCH {table} USING INTEGER PRIMARY KEY"))),
                    "{statement}: {steps:?}"
                );
            }
        }
    }
}

/// No insert builds a temporary table to check its row: SQLite codes a CHECK's `IN` list of
/// three or more constants as one, at every statement (migration 10 wrote them as comparisons).
/// The checks still refuse what they refused.
#[tokio::test]
async fn checks_build_no_temporary_table_and_still_refuse() {
    let (_dir, connection) = migrated().await;
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(tables.iter().any(|t| t == "transactions") && tables.iter().any(|t| t == "ledger"), "{tables:?}");
    for table in &tables {
        let opcodes: Vec<String> = connection
            .prepare(&format!("EXPLAIN INSERT INTO \"{table}\" DEFAULT VALUES"))
            .unwrap()
            .query_map([], |row| row.get(1))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(!opcodes.iter().any(|op| op == "OpenEphemeral"), "an insert into {table} builds a table: {opcodes:?}");
    }
    // The checks alone: no balance is needed for the row.
    connection.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let refused = connection.execute(
        "INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (x'00', x'00', 'bonus', 1, 0)",
        [],
    );
    assert!(
        refused.is_err_and(|e| e.to_string().contains("CHECK constraint failed")),
        "a ledger kind it does not know"
    );
    let taken = connection.execute(
        "INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (x'00', x'00', 'fee_refund', 1, 0)",
        [],
    );
    assert_eq!(taken.unwrap(), 1);
}

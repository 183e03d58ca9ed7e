//! Every list is one range of its filter's index read newest first, never a scan of another
//! index and never a sort: checked on PostgreSQL's own generic plans (those of a prepared
//! statement, which cannot see a filter's value) for the queries the store builds, on a table
//! whose statistics say one value fills each low-cardinality column. Those are the statistics
//! that made the planner walk the key index for a filter matching nothing (every row read).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use payments_types as types;
use uuid::Uuid;

use super::*;
use crate::reads::Value;

/// A PostgreSQL server of its own (`scripts/throwaway-postgres`), stopped and removed when
/// dropped (its standard input closes). PostgreSQL missing fails the test.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/throwaway-postgres");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new("sh")
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("scripts/throwaway-postgres runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.split_whitespace().nth(1).unwrap_or_else(|| panic!("no PostgreSQL: {line:?}")).to_owned();
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `value` as a SQL literal, for `EXECUTE`.
fn literal(value: &Value) -> String {
    match value {
        Value::Int(value) => value.to_string(),
        Value::Text(text) => format!("'{}'", text.replace('\'', "''")),
        Value::Uuid(id) => format!("'{id}'"),
        Value::Bool(value) => value.to_string(),
        Value::Null => "NULL".into(),
    }
}

/// The generic plan of `query`: one line per node.
async fn generic_plan(connection: &tokio_postgres::Client, query: Query<Postgres>) -> Vec<String> {
    static PREPARED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = format!("listed_{}", PREPARED.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let (sql, values) = query.prepared();
    connection.batch_execute(&format!("PREPARE {name} AS {sql}")).await.unwrap();
    let values: Vec<String> = values.iter().map(literal).collect();
    let explain = format!("EXPLAIN EXECUTE {name}({})", values.join(", "));
    let lines = connection.simple_query(&explain).await.unwrap();
    let row = |message| match message {
        tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(|line: &str| line.trim().to_owned()),
        _ => None,
    };
    lines.into_iter().filter_map(row).collect()
}

/// The plan reads `table` backwards through `index` and nothing else of it, its page straight
/// from that scan (a `Limit` right above it, no sort below).
fn assert_range(steps: &[String], table: &str, index: &str, what: &str) {
    let scans: Vec<usize> = (0..steps.len()).filter(|&i| steps[i].contains(&format!(" on {table} "))).collect();
    assert!(
        scans.len() == 1 && steps[scans[0]].contains(&format!("Index Scan Backward using {index} on {table} ")),
        "{what}: expected one backward scan of {index}, got {steps:#?}"
    );
    assert!(scans[0] > 0 && steps[scans[0] - 1].contains("Limit"), "{what}: the page is not read in order: {steps:#?}");
}

#[tokio::test]
async fn every_list_reads_its_filters_index_whatever_the_statistics() {
    let server = Server::start();
    let store = PostgresStore::open(&server.url).await.unwrap();
    let tenant = store.create_tenant(&[7; 32], "plans", Utc::now()).await.unwrap().id;
    let connection = connect(&server.url.parse().unwrap(), "plans").await.expect("the throwaway server answers");
    // 20,000 payments of one balance, currency, type and status (the statistics then say each
    // of those columns has one value), half of them to one recipient.
    let balance = Uuid::new_v4();
    connection
        .execute(
            "INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) VALUES (1, $1, $2, 'GBP', 'b', 0, 0)",
            &[&balance, &tenant.0],
        )
        .await
        .unwrap();
    connection.execute(
        "INSERT INTO transactions (seq, id, tenant_id, transaction_type, payment_method, status, balance_id, currency, \
         amount, fees, to_currency, to_amount, recipient_id, recipient_country, created) \
         SELECT n, gen_random_uuid(), $1, 'payment', 'balance', 'initiated', $2, 'GBP', 100, 0, 'GBP', 100, \
         CASE WHEN n % 2 = 0 THEN $3::uuid END, CASE WHEN n % 2 = 0 THEN 'GB' END, n FROM generate_series(1, 20000) n",
        &[&tenant.0, &balance, &Uuid::new_v4()],
    )
    .await
    .unwrap();
    // As many of every other listed table's rows, one value in each filtered column.
    let others = [
        "INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) \
         SELECT n, gen_random_uuid(), $1, 'GBP', 'b', 0, n FROM generate_series(2, 20000) n",
        "INSERT INTO payment_requests (seq, id, tenant_id, market, currency, settlement_balance_id, status, \
         payment_url, qr_code_url, created) SELECT n, gen_random_uuid(), $1, 'GB', 'GBP', $2, 'initiated', 'u', 'q', n \
         FROM generate_series(1, 20000) n",
        "INSERT INTO virtual_accounts (seq, id, tenant_id, currency, settlement_balance_id, account_name, bank_name, \
         account_number, supported_channels, type, status, created) SELECT n, gen_random_uuid(), $1, 'GBP', $2, 'a', \
         'b', n::text, '[]', 'local', 'active', n FROM generate_series(1, 20000) n",
        "INSERT INTO recipients (seq, id, tenant_id, type, country, bank_account, created) \
         SELECT n, gen_random_uuid(), $1, 'personal', 'GB', '{}', n FROM generate_series(1, 20000) n",
        "INSERT INTO webhook_endpoints (seq, id, tenant_id, url, all_events, secret, created) \
         SELECT n, gen_random_uuid(), $1, 'https://example.com', TRUE, 's', n FROM generate_series(1, 20000) n",
        "INSERT INTO events (seq, tenant_id, event, created, data) OVERRIDING SYSTEM VALUE \
         SELECT 1, $1, 'ping', 1, '{}' WHERE $2::uuid IS NOT NULL",
        "INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) \
         SELECT n, gen_random_uuid(), $1, (SELECT id FROM webhook_endpoints LIMIT 1), 1, \
         CASE WHEN n % 2 = 0 THEN 'pending' ELSE 'delivered' END, CASE WHEN n % 2 = 0 THEN n END, n \
         FROM generate_series(1, 20000) n",
    ];
    for statement in others {
        if statement.contains("$2") {
            connection.execute(statement, &[&tenant.0, &balance]).await.unwrap();
        } else {
            connection.execute(statement, &[&tenant.0]).await.unwrap();
        }
    }
    connection.batch_execute("ANALYZE; SET plan_cache_mode = force_generic_plan").await.unwrap();

    let page = Page { limit: 10, starting_after: None };
    let id = Some(Uuid::new_v4());
    let text = Some("XX".to_owned());
    let filters: Vec<(&str, TransactionFilter)> = vec![
        ("transactions_list", TransactionFilter::default()),
        (
            "transactions_by_status",
            TransactionFilter { status: Some(types::TransactionStatus::Refunded), ..Default::default() },
        ),
        (
            "transactions_by_type",
            TransactionFilter { transaction_type: Some(types::TransactionType::Deposit), ..Default::default() },
        ),
        ("transactions_by_currency", TransactionFilter { currency: text.clone(), ..Default::default() }),
        ("transactions_by_to_currency", TransactionFilter { to_currency: text.clone(), ..Default::default() }),
        ("transactions_by_balance", TransactionFilter { balance_id: id, ..Default::default() }),
        ("transactions_by_recipient", TransactionFilter { recipient_id: id, ..Default::default() }),
        (
            "transactions_by_recipient_country",
            TransactionFilter { recipient_country: text.clone(), ..Default::default() },
        ),
        ("transactions_by_virtual_account", TransactionFilter { virtual_account_id: id, ..Default::default() }),
        ("transactions_by_scheduled_payment", TransactionFilter { scheduled_payment_id: id, ..Default::default() }),
        (
            "transactions_by_status",
            TransactionFilter {
                status: Some(types::TransactionStatus::Failed),
                created_from: Some(Utc::now() - chrono::Duration::days(1)),
                created_before: Some(Utc::now()),
                ..Default::default()
            },
        ),
        (
            "transactions_list",
            TransactionFilter {
                created_from: Some(Utc::now() - chrono::Duration::days(1)),
                created_before: Some(Utc::now()),
                ..Default::default()
            },
        ),
        (
            "transactions_by_status",
            TransactionFilter {
                status: Some(types::TransactionStatus::Failed),
                transaction_type: Some(types::TransactionType::Deposit),
                ..Default::default()
            },
        ),
    ];
    for (index, filter) in filters {
        for start in [None, Some(1_000)] {
            let query = reads::transactions::list(tenant, &filter, start, page);
            let what = format!("transactions through {index} (from {start:?})");
            assert_range(&generic_plan(&connection, query).await, "transactions", index, &what);
        }
    }
    let filters = [
        ("payment_requests_list", PaymentRequestFilter::default()),
        (
            "payment_requests_by_status",
            PaymentRequestFilter { status: Some(types::PaymentRequestStatus::Cancelled), ..Default::default() },
        ),
        ("payment_requests_by_currency", PaymentRequestFilter { currency: text.clone(), ..Default::default() }),
        ("payment_requests_by_balance", PaymentRequestFilter { settlement_balance_id: id, ..Default::default() }),
    ];
    for (index, filter) in filters {
        let query = reads::payment_requests::list(tenant, &filter, Some(1_000), page);
        assert_range(&generic_plan(&connection, query).await, "payment_requests", index, index);
    }
    let filters = [
        ("virtual_accounts_list", VirtualAccountFilter::default()),
        (
            "virtual_accounts_by_status",
            VirtualAccountFilter { status: Some(types::VirtualAccountStatus::Closed), ..Default::default() },
        ),
        ("virtual_accounts_by_currency", VirtualAccountFilter { currency: text.clone(), ..Default::default() }),
        ("virtual_accounts_by_balance", VirtualAccountFilter { settlement_balance_id: id, ..Default::default() }),
    ];
    for (index, filter) in filters {
        let query = reads::virtual_accounts::list(tenant, &filter, Some(1_000), page);
        assert_range(&generic_plan(&connection, query).await, "virtual_accounts", index, index);
    }
    for (index, filter) in [
        ("balances_list", BalanceFilter::default()),
        ("balances_by_currency", BalanceFilter { currency: text.clone() }),
    ] {
        let query = reads::balances::list(tenant, &filter, Some(1_000), page);
        assert_range(&generic_plan(&connection, query).await, "balances", index, index);
    }
    let query = reads::recipients::list(tenant, Some(1_000), page);
    assert_range(&generic_plan(&connection, query).await, "recipients", "recipients_list", "recipients");
    let query = reads::webhooks::endpoint_list(tenant, Some(1_000), page);
    assert_range(&generic_plan(&connection, query).await, "webhook_endpoints", "webhook_endpoints_list", "endpoints");
    for (index, filter) in [
        ("notifications_list", NotificationFilter::default()),
        ("notifications_by_endpoint", NotificationFilter { endpoint_id: id, ..Default::default() }),
    ] {
        let query = reads::webhooks::notification_list(tenant, &filter, Some(1_000), page);
        assert_range(&generic_plan(&connection, query).await, "notifications", index, index);
    }
    // The delivery worker's look for due endpoints: seeks in the index of pending
    // notifications (20,000 of them due here), never a read of every due one.
    let steps = generic_plan(&connection, reads::webhooks::due_endpoints(Utc::now())).await;
    assert!(!steps.iter().any(|s| s.contains("Seq Scan on notifications")), "due endpoints scan: {steps:#?}");
    assert!(
        steps.iter().filter(|s| s.contains("using notifications_due on notifications")).count() >= 2,
        "due endpoints do not seek notifications_due: {steps:#?}"
    );
    drop(store);
}

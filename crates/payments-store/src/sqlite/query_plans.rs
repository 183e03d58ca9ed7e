//! Every list filter is answered through an index that starts with the tenant (the rails' and
//! the outbox's cross-tenant reads through their small partial indexes), never by scanning a
//! table or sorting it: checked on SQLite's own plans for the queries the store builds.

use chrono::Utc;
use payments_types as types;
use sqlx::{QueryBuilder, Sqlite};
use uuid::Uuid;

use super::*;

/// SQLite's plan for `query`: one line per step. Parameters are left unbound; the plan does
/// not depend on their values.
async fn plan(store: &SqliteStore, query: QueryBuilder<Sqlite>) -> Vec<String> {
    let sql = format!("EXPLAIN QUERY PLAN {}", query.sql().as_str());
    let rows: Vec<(i64, i64, i64, String)> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(&mut *store.read().await.unwrap()).await.unwrap();
    rows.into_iter().map(|(.., detail)| detail).collect()
}

/// The plan searches `table` through `index` and neither scans nor sorts it.
fn assert_indexed(steps: &[String], table: &str, index: &str, what: &str) {
    let searched = format!("SEARCH {table} USING INDEX {index} ");
    let covering = format!("SEARCH {table} USING COVERING INDEX {index} ");
    assert!(
        steps.iter().any(|s| s.starts_with(&searched) || s.starts_with(&covering)),
        "{what}: expected {searched}…, got {steps:?}"
    );
    assert!(!steps.iter().any(|s| s.starts_with(&format!("SCAN {table} "))), "{what} scans {table}: {steps:?}");
    assert!(!steps.iter().any(|s| s.contains("TEMP B-TREE")), "{what} sorts: {steps:?}");
}

fn page() -> Page {
    Page { limit: 10, starting_after: None }
}

#[tokio::test]
async fn every_list_filter_is_an_indexed_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("plans.db").to_str().unwrap()).await.unwrap();
    let tenant = TenantId(1);
    let id = Some(Uuid::nil());
    let text = Some("x".to_owned());
    let after = Some((1, 1));

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
        ("search", "transactions_list", TransactionFilter { search: Some("invoice".into()), ..Default::default() }),
        ("short search", "transactions_list", TransactionFilter { search: Some("in".into()), ..Default::default() }),
    ];
    for (what, index, filter) in filters {
        for start in [None, after] {
            let steps = plan(&store, transactions::list_query(tenant, &filter, start, page())).await;
            assert_indexed(&steps, "transactions", index, &format!("transactions by {what}"));
            if filter.search.is_some() {
                assert!(steps.iter().any(|s| s.contains("transaction_search VIRTUAL TABLE")), "{steps:?}");
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
        let steps = plan(&store, payment_requests::list_query(tenant, &filter, after, page())).await;
        assert_indexed(&steps, "payment_requests", index, &format!("payment requests through {index}"));
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
        ("virtual_accounts_list", VirtualAccountFilter { search: Some("sandbox".into()), ..Default::default() }),
    ];
    for (index, filter) in filters {
        let steps = plan(&store, virtual_accounts::list_query(tenant, &filter, after, page())).await;
        assert_indexed(&steps, "virtual_accounts", index, &format!("virtual accounts through {index}"));
    }

    for (index, filter) in [
        ("balances_list", BalanceFilter::default()),
        ("balances_by_currency", BalanceFilter { currency: text.clone() }),
    ] {
        let steps = plan(&store, balances::list_query(tenant, &filter, after, page())).await;
        assert_indexed(&steps, "balances", index, &format!("balances through {index}"));
    }

    let filters = [
        ("notifications_list", NotificationFilter::default()),
        ("notifications_by_endpoint", NotificationFilter { endpoint_id: id, ..Default::default() }),
        ("notifications_list", NotificationFilter { created_from: Some(Utc::now()), ..Default::default() }),
    ];
    for (index, filter) in filters {
        let steps = plan(&store, webhooks::notification_list_query(tenant, &filter, after, page())).await;
        assert_indexed(&steps, "notifications", index, &format!("notifications through {index}"));
    }

    // The rails: one tenant's through its status index, everyone's through the partial index.
    for status in [types::TransactionStatus::Initiated, types::TransactionStatus::Processing] {
        let steps = plan(&store, transactions::on_rails_query(Some(tenant), status)).await;
        assert_indexed(&steps, "transactions", "transactions_by_status", "one tenant's payments on the rails");
        let steps = plan(&store, transactions::on_rails_query(None, status)).await;
        assert_indexed(&steps, "transactions", "transactions_on_rails", "payments on the rails");
    }
    let steps = plan(&store, virtual_accounts::initiated_query(Some(tenant))).await;
    assert_indexed(&steps, "virtual_accounts", "virtual_accounts_by_status", "one tenant's accounts to activate");
    let steps = plan(&store, virtual_accounts::initiated_query(None)).await;
    assert_indexed(&steps, "virtual_accounts", "virtual_accounts_on_rails", "accounts to activate");
}

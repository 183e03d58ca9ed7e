//! What the sandbox says when it cannot use a PostgreSQL database: one line on stderr that names
//! the database by its URL without the password, says what to do, and exits 1, leaving the
//! database as it was — for a server that does not answer, a database written by a newer
//! release, and a database of something else.

use std::process::Command;

use payments_tests::database::connect_postgres;
use payments_tests::database::postgres;
use payments_tests::process::binary;

/// Starts the binary on `url` and returns its stderr, which must be one line, after a failure.
fn refusal(url: &str) -> String {
    let output = Command::new(binary())
        .args(["--listen", "127.0.0.1:0", "--database", url])
        .env_remove("PAYMENTS_SANDBOX_TOKENS")
        .env("RUST_LOG", "off")
        .output()
        .expect("the sandbox runs");
    assert_eq!(output.status.code(), Some(1), "refused: {output:?}");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("s3cret"), "no password: {stderr}");
    stderr
}

/// `url` with a password (which trust authentication ignores), as a user would write it.
fn with_password(url: &str) -> String {
    url.replacen("postgres://postgres@", "postgres://postgres:s3cret@", 1)
}

async fn tables(url: &str) -> Vec<String> {
    let connection = connect_postgres(url).await;
    let rows = connection
        .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1", &[])
        .await
        .unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

#[test]
fn an_unreachable_server_is_named_without_its_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let said = refusal(&format!("postgres://ada:s3cret@127.0.0.1:{port}/payments"));
    assert!(said.contains(&format!("cannot connect to postgres://ada@127.0.0.1:{port}/payments")), "{said}");
    assert!(said.contains("Connection refused"), "why: {said}");
}

/// A server that refuses more connections says so, with how many an instance holds, at once
/// (a pool alone might try again until its timeout and say only that it timed out). The
/// limit is a role's (superusers have none): the sandbox connects as a role allowed three.
#[tokio::test]
async fn a_server_refusing_more_connections_is_named_with_what_an_instance_needs() {
    let url = postgres().fresh_database();
    let database = url.rsplit('/').next().and_then(|tail| tail.split('?').next()).expect("a database").to_owned();
    let role = format!("cramped_{database}");
    let connection = connect_postgres(&url).await;
    for statement in
        [format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 3"), format!("ALTER DATABASE {database} OWNER TO {role}")]
    {
        connection.batch_execute(&statement).await.unwrap();
    }
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (_, place) = rest.split_once('@').expect("a URL with a user");
    let said = refusal(&format!("{scheme}://{role}:s3cret@{place}"));
    assert!(said.contains(&format!("cannot connect to {scheme}://{role}@{place}")), "{said}");
    assert!(said.contains(&format!("too many connections for role \"{role}\"")), "the server's reason: {said}");
    assert!(said.contains("each instance holds") && said.contains("max_connections"), "what to do: {said}");
    assert!(tables(&url).await.is_empty(), "nothing was made: {said}");
}

#[tokio::test]
async fn a_database_from_a_newer_release_is_refused_and_left_alone() {
    let url = postgres().fresh_database();
    drop(payments_sandbox::open_store(&url).await.expect("a fresh database is migrated"));
    let connection = connect_postgres(&url).await;
    connection
        .batch_execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES (99, 'from the future', TRUE, '\\x00', 1)",
        )
        .await
        .unwrap();
    let before = tables(&url).await;
    let said = refusal(&with_password(&url));
    assert!(said.contains(&format!("{url} was written by a newer payments-sandbox")), "{said}");
    assert!(said.contains("migration 99") && said.contains("give --database an empty database"), "{said}");
    assert_eq!(tables(&url).await, before);
    let versions: i64 = connection.query_one("SELECT COUNT(*) FROM _sqlx_migrations", &[]).await.unwrap().get(0);
    assert_eq!(versions, 7, "its history as it was: this release's six migrations and the one from the future");
}

#[tokio::test]
async fn a_database_of_something_else_is_refused_and_left_alone() {
    let url = postgres().fresh_database();
    connect_postgres(&url)
        .await
        .batch_execute(
            "CREATE TABLE invoices (id BIGINT PRIMARY KEY, total BIGINT); INSERT INTO invoices VALUES (1, 5)",
        )
        .await
        .unwrap();
    let said = refusal(&with_password(&url));
    assert!(said.contains(&format!("{url} is not a payments-sandbox database (it has tables invoices)")), "{said}");
    assert_eq!(tables(&url).await, ["invoices"], "nothing was added");
}

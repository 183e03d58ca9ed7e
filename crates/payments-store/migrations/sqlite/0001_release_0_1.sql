-- The schema of payments-sandbox 0.1, which kept resources as JSON documents and migrated
-- itself with PRAGMA user_version. A database written by that release already has these tables
-- (so every statement is IF NOT EXISTS and changes nothing there); a new database gets them
-- empty. Either way 0002 then moves the data into the relational schema.
CREATE TABLE IF NOT EXISTS tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    default_currency TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    hash BLOB PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resources (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_us INTEGER NOT NULL,
    idempotency_key TEXT,
    request TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS resources_list ON resources (tenant_id, kind, seq);
CREATE UNIQUE INDEX IF NOT EXISTS resources_idempotency ON resources (tenant_id, kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS balances (
    id TEXT PRIMARY KEY REFERENCES resources(id),
    amount INTEGER NOT NULL CHECK (amount >= 0)
);
CREATE TABLE IF NOT EXISTS ledger (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    balance_id TEXT NOT NULL REFERENCES balances(id),
    transaction_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    delta INTEGER NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_balance ON ledger (balance_id);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    event TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    created TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    url TEXT NOT NULL,
    events TEXT,
    secret TEXT NOT NULL,
    created TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS notifications (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
    event TEXT NOT NULL,
    created TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    status TEXT NOT NULL,
    response_code INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    in_flight INTEGER NOT NULL DEFAULT 0,
    next_attempt_us INTEGER
);
CREATE INDEX IF NOT EXISTS notifications_list ON notifications (tenant_id, seq);
CREATE INDEX IF NOT EXISTS notifications_due ON notifications (endpoint_id, next_attempt_us)
    WHERE next_attempt_us IS NOT NULL;

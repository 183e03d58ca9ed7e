-- One row that `GET /readyz` rewrites: the database is ready when a read and a committed write
-- both succeed now (a full disk, a standby or a server shutting down fails the write).
CREATE TABLE readiness (
    id integer PRIMARY KEY CHECK (id = 1),
    checked_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO readiness (id) VALUES (1);

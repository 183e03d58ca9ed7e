-- One row that `GET /readyz` rewrites through the writer: the database is ready when a read and
-- a committed write both succeed now. The write rewrites `room`, 64 KiB, so it needs the room a
-- batch of payments needs: on a disk with a few pages to spare (enough for a one-page write,
-- not for a payment) the instance is not ready.
CREATE TABLE readiness (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    checked_at INTEGER NOT NULL,
    room BLOB NOT NULL
) STRICT;
INSERT INTO readiness (id, checked_at, room) VALUES (1, 0, x'');

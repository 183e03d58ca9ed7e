-- The writer runs a changeset's statements one by one (rusqlite, on its own thread) and reads
-- how many rows each guarded statement changed, so the `guards` table, whose trigger failed a
-- one-call script with `guard <n>`, has no more use.
DROP TRIGGER guards_fail;
DROP TABLE guards;

-- Contract 2.1.0 restores the interface's `scheduled_payment_id` filter of `GET /transactions`
-- (2.0.0 had dropped it, and clients written against the interface were refused). No operation
-- makes scheduled payments, so the column is empty and its partial index holds nothing: the
-- filter is served by an index like every other, and matches no transaction.
ALTER TABLE transactions ADD COLUMN scheduled_payment_id BLOB;
CREATE INDEX transactions_by_scheduled_payment ON transactions (tenant_id, scheduled_payment_id)
    WHERE scheduled_payment_id IS NOT NULL;

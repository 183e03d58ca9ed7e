-- The search index keeps no copy of the fields it indexes: `transaction_search` becomes a
-- contentless FTS5 table (`content=''`: the index alone, which is all a search by substring
-- reads to find its rows) without per-row token counts (`columnsize=0`: only ranking reads them,
-- and searches are ordered by seq). Indexing a payment so writes two rows fewer (BENCHMARKS.md,
-- *Why, measured: The search index without copies*). A contentless index cannot remove a row
-- without being given its old values; no transaction is ever deleted and no searched field of
-- one ever changes, so it never has to. Needles too short for a trigram, which were found by
-- reading the copies, are looked for in `transactions` itself (`sqlite/codec.rs`).
ALTER TABLE transaction_search RENAME TO legacy_transaction_search;
CREATE VIRTUAL TABLE transaction_search USING fts5(
    reference, payment_reference, order_id, payer_name, account_name, alias,
    tokenize = 'trigram', content = '', columnsize = 0
);
INSERT INTO transaction_search (transaction_search, rank) VALUES ('automerge', 8);
INSERT INTO transaction_search (rowid, reference, payment_reference, order_id, payer_name, account_name, alias)
SELECT rowid, reference, payment_reference, order_id, payer_name, account_name, alias
FROM legacy_transaction_search ORDER BY rowid;
DROP TABLE legacy_transaction_search;

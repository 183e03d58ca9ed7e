-- A transaction's search row waits in this plain table, written with the transaction, until
-- the writer moves a batch of them into `transaction_search` at once (`sqlite/search_batches.rs`):
-- FTS5 writes a segment at every commit that adds to it, and merges them as they pile up, which
-- had cost a payment more than everything else it wrote. Searches read both. seq =
-- transactions.seq; `folded`: the fields case-folded and joined by U+001F, which a search
-- compares with the folded needle.
CREATE TABLE transaction_search_pending (
    seq INTEGER PRIMARY KEY,
    reference TEXT,
    payment_reference TEXT,
    order_id TEXT,
    payer_name TEXT,
    account_name TEXT,
    alias TEXT,
    folded TEXT NOT NULL
);

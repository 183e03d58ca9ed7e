-- FTS5 writes a segment per commit and merges segments as they pile up: by default four of a
-- level at a time, so each search row is rewritten once per level of four. Eight at a time
-- rewrites it about a third less often (log8 against log4 levels), for searches that read a few
-- more segments: measured on 240,000 transactions, 8 rows a commit, 37,000 -> 55,000 rows
-- indexed a second, rare and common searches unchanged (0.67 and 0.25-0.26 ms); sixteen at a
-- time gained another tenth and doubled the searches' time.
INSERT INTO transaction_search (transaction_search, rank) VALUES ('automerge', 8);
INSERT INTO virtual_account_search (virtual_account_search, rank) VALUES ('automerge', 8);

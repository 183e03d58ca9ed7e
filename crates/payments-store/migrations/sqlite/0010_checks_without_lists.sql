-- SQLite codes `column IN (three or more constants)` as a temporary index of the constants,
-- built again at every statement that checks it: five of them in a payment's inserts, a tenth of
-- its instructions (BENCHMARKS.md, *Why, measured: CHECKs without lists*). The same checks as
-- comparisons joined by OR build nothing. CHECK constraints are changed in place, as SQLite
-- documents (lang_altertable.html, "Making Other Kinds Of Table Schema Changes"): every row
-- already there meets the new ones, which allow exactly what the old ones did; `RESET` has this
-- connection read the schema again.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (kind IN (''payment'', ''fee'', ''refund'', ''fee_refund'', ''collection'', ''deposit''))',
    'CHECK (kind = ''payment'' OR kind = ''fee'' OR kind = ''refund'' OR kind = ''fee_refund'' OR kind = ''collection'' OR kind = ''deposit'')')
WHERE type = 'table' AND name = 'ledger';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''initiated'', ''processed'', ''failed'', ''cancelled''))',
    'CHECK (status = ''initiated'' OR status = ''processed'' OR status = ''failed'' OR status = ''cancelled'')')
WHERE type = 'table' AND name = 'payment_requests';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (transaction_type IN (''payment'', ''deposit'', ''collection''))',
    'CHECK (transaction_type = ''payment'' OR transaction_type = ''deposit'' OR transaction_type = ''collection'')')
WHERE type = 'table' AND name = 'transactions';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (payment_method IN (''balance'', ''bank_transfer'', ''payment_link''))',
    'CHECK (payment_method = ''balance'' OR payment_method = ''bank_transfer'' OR payment_method = ''payment_link'')')
WHERE type = 'table' AND name = 'transactions';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''initiated'', ''pending'', ''processing'', ''processed'', ''cancelled'', ''failed'', ''refunded''))',
    'CHECK (status = ''initiated'' OR status = ''pending'' OR status = ''processing'' OR status = ''processed'' OR status = ''cancelled'' OR status = ''failed'' OR status = ''refunded'')')
WHERE type = 'table' AND name = 'transactions';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''initiated'', ''active'', ''blocked'', ''closed''))',
    'CHECK (status = ''initiated'' OR status = ''active'' OR status = ''blocked'' OR status = ''closed'')')
WHERE type = 'table' AND name = 'virtual_accounts';
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''pending'', ''delivered'', ''failed'', ''discarded''))',
    'CHECK (status = ''pending'' OR status = ''delivered'' OR status = ''failed'' OR status = ''discarded'')')
WHERE type = 'table' AND name = 'notifications';
PRAGMA writable_schema = RESET;

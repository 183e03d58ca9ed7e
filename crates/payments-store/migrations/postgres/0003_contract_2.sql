-- Rates as exact decimals of 12 significant digits (the rate a conversion is made at). Rows
-- written before have none: their conversion was made at the six-decimal integer, which the
-- store then shows as the decimal.
ALTER TABLE transactions ADD COLUMN rate_decimal TEXT, ADD COLUMN single_rate_decimal TEXT;

-- No scheduled payments: the interface names a `scheduled_payment_id` filter but no operation
-- makes one, so 2.0.0 dropped the filter, and its always-empty column (and index) goes with it.
ALTER TABLE transactions DROP COLUMN scheduled_payment_id;

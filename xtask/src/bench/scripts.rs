//! The Lua scripts wrk runs: payments, pings, lists and readers.

/// Pays with a fresh `order_id` on every request, `<prefix>s<thread>-<n>`, referenced
/// `Invoice <order_id>`. Arguments: the prefix (unique per run), the balance, the recipients.
pub(super) const PAY: &str = r#"
-- `me` is the global `thread:set` gives each thread: a local of that name would hide it, and
-- every thread would send the same order ids (half the payments answered as replays).
local prefix, balance, recipients, counter = nil, nil, {}, 0
local threads = {}
function setup(thread) thread:set("me", #threads) table.insert(threads, thread) end
function init(args)
  prefix, balance = args[1], args[2]
  for i = 3, #args do recipients[#recipients + 1] = args[i] end
end
request = function()
  counter = counter + 1
  local id = string.format("%ss%d-%d", prefix, me, counter)
  local body = string.format(
    '{"transaction_type":"payment","amount":%d,"balance_id":"%s","recipient_id":"%s","order_id":"%s","reference":"Invoice %s"}',
    100 + counter % 900, balance, recipients[1 + counter % #recipients], id, id)
  return wrk.format("POST", "/transactions", {["Authorization"] = "Bearer tok_bench", ["Content-Type"] = "application/json"}, body)
end
"#;

/// Pings the endpoint given (`POST /webhooks`): a notification for each.
pub(super) const PING: &str = r#"
local body
function init(args) body = string.format('{"endpoint_id":"%s"}', args[1]) end
request = function()
  return wrk.format("POST", "/webhooks", {["Authorization"] = "Bearer tok_bench", ["Content-Type"] = "application/json"}, body)
end
"#;

/// Lists with the query given, the `{n}` in it replaced by a random number up to args[2]:
/// `/transactions?order_id=s0-{n}` picks one of the seeded payments.
pub(super) const LIST: &str = r#"
local template, most = nil, 1
function init(args)
  template, most = args[1], tonumber(args[2])
  math.randomseed(os.time())
end
request = function()
  local path = string.gsub(template, "{n}", tostring(math.random(1, most)))
  return wrk.format("GET", path, {["Authorization"] = "Bearer tok_bench"})
end
"#;

/// Lists back to back, cycling through the queries given.
pub(super) const READERS: &str = r#"
local queries, i = {}, 0
function init(args)
  for _, query in ipairs(args) do queries[#queries + 1] = query end
  math.randomseed(os.time())
end
request = function()
  i = i + 1
  local path = string.gsub(queries[1 + i % #queries], "{n}", tostring(math.random(1, 1000)))
  return wrk.format("GET", path, {["Authorization"] = "Bearer tok_bench"})
end
"#;

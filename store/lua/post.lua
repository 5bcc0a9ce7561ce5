-- post.lua: one inbox message, with the wake rule.
-- KEYS: the process's first 5 keys (up to idem).
-- ARGV: pid, base (of its partition's keys), now (ms), at (events' time), kind, from, content,
--       message at (ms), idempotency key, idempotency ttl, inbox limit
--       ('0' = none), the call an approval decides ('' for other kinds),
--       who decides it ('user' or 'operator'), then the message's
--       traceparent when it has one
-- Returns {status, message id}: OK, DUP, NOTFOUND, CLOSED, BUSY, FULL,
-- NOTPENDING, DECIDED or OPERATORONLY.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local status, id = post(p, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[11]), ARGV[12], ARGV[13], ARGV[14])
return {status, id}

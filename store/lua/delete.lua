-- delete.lua: remove a process and all it has (record, inbox, log,
-- idempotency keys, timers, index entries, its entry among its parent's
-- workers), unless a turn holds its lease. Its own workers are the
-- caller's to delete first (Store.Delete).
-- A wake still queued for it is dropped by the claim that reads it, which
-- finds no record; so is one a dead node left pending. A worker deleted
-- before it finished tells its parent, which may wait for its report.
-- KEYS: the process's keys, then, when it has a parent, the parent's workers
--       index, and the parent's first 5 keys when telling it.
-- ARGV: pid, base (of its partition's keys), now, at, finished before (unix ms; '' = delete whatever
--       the state: else only a DONE or FAILED process last changed before),
--       then, when telling the parent: its pid, its base, kind, from,
--       content, message at (ms), idempotency key, idempotency ttl and
--       traceparent when there is one (as commit.lua takes them)
-- Returns {'NOTFOUND'}, {'RUNNING'}, {'KEPT'} (not finished before),
-- {'WORKERS'} (it still has workers) or {'OK', record (as HGETALL lists
-- it)}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local record = redis.call('HGETALL', p.proc)
if #record == 0 then return {'NOTFOUND'} end
if redis.call('EXISTS', p.lease) == 1 then return {'RUNNING'} end
local r = fields(record)
if ARGV[5] ~= '' then
  local finished = r.state == 'DONE' or r.state == 'FAILED'
  if not finished or tonumber(r.updated_at) >= tonumber(ARGV[5]) then return {'KEPT'} end
end
if redis.call('EXISTS', workers_key(p)) == 1 then return {'WORKERS'} end
if ARGV[6] and r.state ~= 'DONE' and r.state ~= 'FAILED' then
  local parent = process(KEYS, 8, ARGV[6], ARGV[7], p.now, p.at)
  post(parent, ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], 0, nil, nil, ARGV[14]) -- 0: a report is never refused
end
redis.call('ZREM', state_key(p, r.state), p.pid)
if r.owner then redis.call('ZREM', owner_key(p, r.owner), p.pid) end
if r.parent then redis.call('ZREM', KEYS[7], p.pid) end
for _, id in ipairs(redis.call('HKEYS', p.timers)) do
  redis.call('ZREM', due_key(p), p.pid .. '|' .. id)
end
redis.call('SREM', waiting_key(p), p.pid)
redis.call('DEL', p.proc, p.inbox, p.events, p.idem, p.timers, approvals_key(p))
return {'OK', record}

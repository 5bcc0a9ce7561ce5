-- delete.lua: remove a process and all it has (record, inbox, log,
-- idempotency keys, timers, index entries, its entry among its parent's
-- workers), unless a turn holds its lease. Its own workers are the
-- caller's to delete first (Store.Delete).
-- A wake still queued for it is dropped by the claim that reads it, which
-- finds no record; so is one a dead node left pending.
-- KEYS: the process's keys.
-- ARGV: pid, shard, now, at, finished before (unix ms; '' = delete whatever
--       the state: else only a DONE or FAILED process last changed before)
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
if redis.call('EXISTS', workers_key(p.pid)) == 1 then return {'WORKERS'} end
redis.call('ZREM', state_key(r.state), p.pid)
if r.owner then redis.call('ZREM', owner_key(r.owner), p.pid) end
if r.parent then redis.call('ZREM', workers_key(r.parent), p.pid) end
for _, id in ipairs(redis.call('HKEYS', p.timers)) do
  redis.call('ZREM', TIMERS, p.pid .. '|' .. id)
end
redis.call('DEL', p.proc, p.inbox, p.events, p.idem, p.timers)
return {'OK', record}

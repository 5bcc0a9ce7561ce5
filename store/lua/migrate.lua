-- migrate.lua: move one process from the key layout before partitions
-- (brain:{pid}:<part>, global indexes) into its partition (brain:{T}:<part>:<pid>,
-- the partition's indexes), in one step: run again, it finds nothing to
-- move. Not a script of the library: Store.Migrate runs it, on one Redis
-- (the old layout was never on a Cluster), where a script may touch keys of
-- any slot.
-- ARGV: pid, the base of its partition's keys.
-- Returns 0 when the process was moved already, else 1.
local pid, base = ARGV[1], ARGV[2]
local old = 'brain:{' .. pid .. '}:'
local flat = redis.call('HGETALL', old .. 'proc')
if #flat == 0 then return 0 end
local r = {}
for i = 1, #flat, 2 do r[flat[i]] = flat[i + 1] end
for _, part in ipairs({'proc', 'events', 'inbox', 'idem', 'timers', 'workers', 'approvals'}) do
  if redis.call('EXISTS', old .. part) == 1 then redis.call('RENAME', old .. part, base .. part .. ':' .. pid) end
end
local proc = base .. 'proc:' .. pid
redis.call('ZADD', base .. 'state:' .. r.state, r.created_at, pid)
if r.owner then redis.call('ZADD', base .. 'owner:' .. r.owner, r.created_at, pid) end
if r.waiting_for == 'approval' then redis.call('SADD', base .. 'waiting', pid) end
for _, id in ipairs(redis.call('HKEYS', base .. 'timers:' .. pid)) do
  local member = pid .. '|' .. id
  local due = redis.call('ZSCORE', 'brain:timers', member)
  if due then redis.call('ZADD', base .. 'due', due, member) end
end
-- A process on the old wake queue goes on the new one; so does one whose
-- turn was cut short by its node's stop (RUNNING): its claim recovers it.
-- The wake it was claimed with is in a stream that is gone.
redis.call('HDEL', proc, 'wake')
if r.queued == '1' or r.state == 'RUNNING' then
  redis.call('XADD', base .. 'wake:' .. r.engine, '*', 'pid', pid)
  redis.call('HSET', proc, 'queued', '1')
end
return 1

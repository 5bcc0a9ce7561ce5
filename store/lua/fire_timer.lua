-- fire_timer.lua: fire a due timer once: only the caller that still finds
-- it due at the same time rearms or removes it and posts its message.
-- KEYS: the process's keys, then its partition's timer index.
-- ARGV: pid, base (of its partition's keys), now (ms), at (events' time), timer id, due ms, next
--       ms ('0' = remove), next spec, from, content, message at (ms), inbox
--       limit ('0' = none), idempotency ttl ms, kind (schedule, or approval
--       for a call's timeout), the call an approval decides
-- A one-shot timer that fires is noted in the process's idempotency hash
-- ('fired:' .. id) for that ttl, so that a put of it made again (a resumed
-- turn's schedule_wakeup) does not arm it twice.
-- A tick whose timer's last tick still waits in the inbox joins it instead
-- of queueing behind it: a process that waits for its user (schedule
-- messages do not wake a BLOCKED one) would otherwise find one per firing
-- when the user comes back. The last tick's message id is kept in the
-- idempotency hash ('tick:' .. id), for that ttl.
-- Returns {'FIRED', message id}, {'WAITING', message id} (fired, and its
-- last tick is still in the inbox), {'FULL'} (fired, but the inbox was
-- full: the tick is dropped), {'NOTDUE'}, {'GONE'}, or {'DECIDED'} (a
-- timeout whose call was decided first: removed, nothing posted).
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local id = ARGV[5]
local member = p.pid .. '|' .. id
local score = redis.call('ZSCORE', due_key(p), member)
if not score or tonumber(score) ~= tonumber(ARGV[6]) then return {'NOTDUE'} end
local function remove()
  redis.call('ZREM', due_key(p), member)
  redis.call('HDEL', p.timers, id)
end
local state = redis.call('HGET', p.proc, 'state')
if not state or state == 'DONE' or state == 'FAILED' then
  remove()
  return {'GONE'}
end
if ARGV[7] == '0' then
  remove()
  redis.call('HSET', p.idem, 'fired:' .. id, ARGV[6])
  redis.call('PEXPIRE', p.idem, ARGV[13])
else
  redis.call('ZADD', due_key(p), ARGV[7], member)
  redis.call('HSET', p.timers, id, ARGV[8])
end
if ARGV[14] == 'approval' then
  local status, msg = post(p, 'approval', ARGV[9], ARGV[10], ARGV[11], '', 0, 0, ARGV[15], 'operator') -- the system's
  if status ~= 'OK' then return {'DECIDED'} end
  return {'FIRED', msg}
end
local last = redis.call('HGET', p.idem, 'tick:' .. id)
if last and #redis.call('XRANGE', p.inbox, last, last) > 0 then return {'WAITING', last} end
local status, msg = post(p, 'schedule', ARGV[9], ARGV[10], ARGV[11], '', 0, tonumber(ARGV[12]))
if status == 'FULL' then return {'FULL'} end
redis.call('HSET', p.idem, 'tick:' .. id, msg)
redis.call('PEXPIRE', p.idem, ARGV[13])
return {'FIRED', msg}

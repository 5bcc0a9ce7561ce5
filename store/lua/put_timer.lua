-- put_timer.lua: create or replace a timer of a live process.
-- KEYS: the process's keys, then its partition's timer index.
-- ARGV: pid, base (of its partition's keys), now, at, timer id, due ms, spec, once ('1': not when a
--       one-shot timer of that id has fired, see fire_timer.lua)
-- Returns {'OK'}, {'NOTFOUND'}, {'CLOSED'} or {'FIRED'}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local state = redis.call('HGET', p.proc, 'state')
if not state then return {'NOTFOUND'} end
if state == 'DONE' or state == 'FAILED' then return {'CLOSED'} end
if ARGV[8] == '1' and redis.call('HEXISTS', p.idem, 'fired:' .. ARGV[5]) == 1 then return {'FIRED'} end
redis.call('HSET', p.timers, ARGV[5], ARGV[7])
redis.call('ZADD', due_key(p), ARGV[6], p.pid .. '|' .. ARGV[5])
return {'OK'}

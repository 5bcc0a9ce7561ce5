-- put_timer.lua: create or replace a timer of a live process.
-- KEYS: the process's keys, then the global timer index.
-- ARGV: pid, shard, now, at, timer id, due ms, spec
-- Returns {'OK'}, {'NOTFOUND'} or {'CLOSED'}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local state = redis.call('HGET', p.proc, 'state')
if not state then return {'NOTFOUND'} end
if state == 'DONE' or state == 'FAILED' then return {'CLOSED'} end
redis.call('HSET', p.timers, ARGV[5], ARGV[7])
redis.call('ZADD', TIMERS, ARGV[6], p.pid .. '|' .. ARGV[5])
return {'OK'}

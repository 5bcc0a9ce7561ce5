-- checkpoint.lua: append events of a running turn, fenced.
-- KEYS: the process's first 3 keys (up to lease).
-- ARGV: pid, shard, now, at, lease value, token, the number of events
--       the caller knows the log to hold ('' = not known), events (JSON) ...
-- Returns {'OK', gapless ('1'/'0'), id of each event ...} or {'FENCED'}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fenced(p, ARGV[5], ARGV[6], redis.call('HGET', p.proc, 'fence')) then return {'FENCED'} end
local out = {'OK', ends_at(p, ARGV[7])}
for i = 8, #ARGV do out[#out + 1] = append(p, ARGV[i]) end
redis.call('HSET', p.proc, 'updated_at', p.now)
return out

-- create.lua: a new process, with its optional first message.
-- KEYS: the process's keys (keys.go processKeys), then its parent's
--       workers index when it has a parent.
-- ARGV: pid, base (of its partition's keys), now (ms), at (events' time), state, recipe, engine,
--       parent, depth, owner, metadata, has input ('1'/'0'), kind, from,
--       content, message at (ms), idempotency key, idempotency ttl, the
--       most processes the owner may have in this partition ('0' = no
--       limit, '-1' = none), the steering of a user's messages while a turn
--       runs ('' for queue, the default, which is no field), then the
--       message's traceparent when it has one
-- Returns {'EXISTS'}, {'LIMIT'} (the owner has that many) or {'OK', input
-- message id, record}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if redis.call('EXISTS', p.proc) == 1 then return {'EXISTS'} end
local limit = tonumber(ARGV[19])
if ARGV[10] ~= '' and limit ~= 0 and redis.call('ZCARD', owner_key(p, ARGV[10])) >= limit then return {'LIMIT'} end
local state = ARGV[5]
redis.call('HSET', p.proc,
  'recipe', ARGV[6], 'engine', ARGV[7], 'state', state, 'version', '1',
  'depth', ARGV[9], 'created_at', p.now, 'updated_at', p.now, 'fence', '0')
if ARGV[8] ~= '' then
  redis.call('HSET', p.proc, 'parent', ARGV[8])
  redis.call('ZADD', KEYS[7], p.now, p.pid)
end
if ARGV[10] ~= '' then redis.call('HSET', p.proc, 'owner', ARGV[10]) end
if ARGV[11] ~= '' then redis.call('HSET', p.proc, 'metadata', ARGV[11]) end
if ARGV[20] ~= '' then redis.call('HSET', p.proc, 'steering', ARGV[20]) end
redis.call('ZADD', state_key(p, state), p.now, p.pid)
if ARGV[10] ~= '' then redis.call('ZADD', owner_key(p, ARGV[10]), p.now, p.pid) end
local id = ''
if ARGV[12] == '1' then
  local _
  _, id = post(p, ARGV[13], ARGV[14], ARGV[15], ARGV[16], ARGV[17], ARGV[18], 0, nil, nil, ARGV[21]) -- 0: an empty inbox takes it
end
return {'OK', id, redis.call('HGETALL', p.proc)}

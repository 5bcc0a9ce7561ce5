-- due_timers.lua: the timers due at a time, earliest first, with their
-- specs. KEYS: a partition's timer index. ARGV: now ms, limit, the
-- partition's base.
-- Returns {member, due, spec, ...}; spec is '' when it is missing.
local out = {}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
for i = 1, #due, 2 do
  local member = due[i]
  local sp = string.find(member, '|', 1, true)
  local spec = false
  if sp then
    spec = redis.call('HGET', keys_of(ARGV[3], string.sub(member, 1, sp - 1)).timers, string.sub(member, sp + 1))
  end
  out[#out + 1] = member
  out[#out + 1] = due[i + 1]
  out[#out + 1] = spec or ''
end
return out

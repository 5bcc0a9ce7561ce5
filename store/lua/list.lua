-- list.lua: a page of process records from the state index, ordered by
-- created_at then id across the states asked for.
-- KEYS: the state index keys. ARGV: limit, cursor score ('' = start),
-- cursor id.
-- Returns {next score, next id, id1, record1, id2, record2, ...}; next
-- score is '' on the last page.
local limit = tonumber(ARGV[1])
local cscore, cid = ARGV[2], ARGV[3]

-- before orders ids as Redis orders members of equal score (bytes), which
-- Lua's locale-dependent string comparison does not promise.
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local cands = {}
local function add(key, flat)
  for i = 1, #flat, 2 do
    cands[#cands + 1] = {id = flat[i], score = tonumber(flat[i + 1])}
  end
end
for _, key in ipairs(KEYS) do
  if cscore == '' then
    add(key, redis.call('ZRANGEBYSCORE', key, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1))
  else
    local same = redis.call('ZRANGEBYSCORE', key, cscore, cscore, 'WITHSCORES')
    local after = {}
    for i = 1, #same, 2 do
      if before(cid, same[i]) then
        after[#after + 1] = same[i]
        after[#after + 1] = same[i + 1]
      end
    end
    add(key, after)
    add(key, redis.call('ZRANGEBYSCORE', key, '(' .. cscore, '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1))
  end
end
table.sort(cands, function(a, b)
  if a.score ~= b.score then return a.score < b.score end
  return before(a.id, b.id)
end)

local out = {'', ''}
local n = math.min(#cands, limit)
if #cands > limit then
  out[1] = string.format('%d', cands[n].score)
  out[2] = cands[n].id
end
for i = 1, n do
  out[#out + 1] = cands[i].id
  out[#out + 1] = redis.call('HGETALL', keys_of(cands[i].id).proc)
end
return out

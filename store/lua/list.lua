-- list.lua: a page of process records from indexes (the state index keys,
-- or an owner's index), ordered by created_at then id across the keys.
-- KEYS: the index keys. ARGV: limit, cursor score ('' = start), cursor
-- id, then the states to keep (none: every state).
-- Returns {next score, next id, id1, record1, inbox length1, id2, ...}; next
-- score is '' on the last page. With states to keep, at most 4 × limit + 1
-- records are looked at: a page may be short and still have a next.
local limit = tonumber(ARGV[1])
local cscore, cid = ARGV[2], ARGV[3]
local keep = nil
if #ARGV > 3 then
  keep = {}
  for i = 4, #ARGV do keep[ARGV[i]] = true end
end
local window = limit + 1
if keep then window = 4 * limit + 1 end

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
local full = false -- an index has more than its window holds
local function add(key, flat)
  if #flat >= 2 * window then full = true end
  for i = 1, #flat, 2 do
    cands[#cands + 1] = {id = flat[i], score = tonumber(flat[i + 1])}
  end
end
for _, key in ipairs(KEYS) do
  if cscore == '' then
    add(key, redis.call('ZRANGEBYSCORE', key, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, window))
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
    add(key, redis.call('ZRANGEBYSCORE', key, '(' .. cscore, '+inf', 'WITHSCORES', 'LIMIT', 0, window))
  end
end
table.sort(cands, function(a, b)
  if a.score ~= b.score then return a.score < b.score end
  return before(a.id, b.id)
end)

-- Each index gave its first window members: the first window candidates
-- of the merge are the first of the union.
local out = {'', ''}
local taken, last = 0, 0
for i = 1, math.min(#cands, window) do
  if taken == limit then break end
  last = i
  local rec = redis.call('HGETALL', keys_of(cands[i].id).proc)
  if #rec > 0 and (keep == nil or keep[fields(rec).state]) then
    out[#out + 1] = cands[i].id
    out[#out + 1] = rec
    out[#out + 1] = redis.call('XLEN', keys_of(cands[i].id).inbox)
    taken = taken + 1
  end
end
if last > 0 and (last < #cands or full) then
  out[1] = string.format('%d', cands[last].score)
  out[2] = cands[last].id
end
return out

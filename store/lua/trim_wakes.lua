-- trim_wakes.lua: delete the entries of a wake stream every node is done
-- with: those before its oldest pending entry, else up to the last one
-- delivered. What was delivered and what is pending are read at one
-- instant: read apart, an entry delivered in between would be neither
-- pending in one answer nor beyond the last delivered in the other, and be
-- trimmed while a node still needed it.
-- KEYS: the stream. Returns the number of entries deleted.
local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if groups.err then return 0 end -- no stream yet
local last
for _, g in ipairs(groups) do
  local f = fields(g)
  if f.name == GROUP then last = f['last-delivered-id'] end
end
if not last or last == '0-0' then return 0 end
local pending = redis.call('XPENDING', KEYS[1], GROUP)
local keep = pending[2]
if pending[1] == 0 then
  -- Deleting the last delivered too lets Redis free the stream's nodes
  -- whole, which a read then need not scan. (A sequence too long for a
  -- Lua number keeps it.)
  local dash = string.find(last, '-', 1, true)
  local seq = string.sub(last, dash + 1)
  keep = last
  if #seq < 15 then keep = string.sub(last, 1, dash) .. string.format('%d', tonumber(seq) + 1) end
end
return redis.call('XTRIM', KEYS[1], 'MINID', keep)

-- commit.lua: end a turn, fenced, in one step: append its last events, fire
-- its lifecycle event, give the lease and the wake up, apply the wake rule
-- to what is left in the inbox, trim the log to what the recipe keeps, and
-- post a finished worker's result to its parent.
-- KEYS: the process's first 4 keys (up to inbox), then the parent's first
-- 5 (up to idem) when notifying.
-- ARGV: pid, base (of its partition's keys), now (ms), at (events' time), lease value, token,
--       event, by (who ends the turn), wake stream, wake entry id, the
--       number of events the caller knows the log to hold ('' = not
--       known), the turn's input and output tokens, the most events the
--       log keeps ('0' = all), the number n of events, n events (JSON),
--       the calls the process waits for approval of (the JSON of the
--       record's approvals; '' = none), then, only when notifying: parent
--       pid, parent's base, kind, from, content, message at (ms),
--       idempotency key, idempotency ttl and the message's traceparent when
--       it has one. (An argument costs Redis even when empty.)
-- Returns {'FENCED'} or {'OK', status (the prelude's), gapless ('1'/'0'),
-- {id of each event}, made: the events the script wrote itself, as write in
-- the prelude lists them, only when gapless}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fenced(p, ARGV[5], ARGV[6], rec(p).fence) then return {'FENCED'} end
local event, by = ARGV[7], ARGV[8]
local to = fire(event, 'RUNNING')
if to == nil then return redis.error_reply('store: commit: event ' .. event .. ' does not end a turn') end
local gapless = ends_at(p, ARGV[11])
local ids = {}
local approvals = 16 + tonumber(ARGV[15]) -- the calls waiting for approval follow the events
for i = 16, approvals - 1 do ids[#ids + 1] = append(p, ARGV[i]) end
local notify = approvals + 1 -- then the parent's message, if any

local r = rec(p)
local state = r.state
-- The calls the process now waits for approval of (none: it waits for
-- nothing of the kind). A call that stays keeps its mark: a decision that
-- came during the turn stands; a call the turn settled is forgotten.
if ARGV[approvals] ~= '' then
  local key, keep = approvals_key(p), {}
  for _, c in ipairs(cjson.decode(ARGV[approvals])) do
    keep[c.call_id] = true
    redis.call('HSETNX', key, c.call_id, c.by)
  end
  for _, id in ipairs(redis.call('HKEYS', key)) do
    if not keep[id] then redis.call('HDEL', key, id) end
  end
  r.waiting_for, r.approvals = 'approval', ARGV[approvals]
  redis.call('HSET', p.proc, 'waiting_for', 'approval', 'approvals', ARGV[approvals])
  redis.call('SADD', waiting_key(p), p.pid)
else
  forget_approvals(p)
end
-- The turn's tokens join the totals, and those of the day (UTC, by the
-- caller's clock: '<days since 1970>:<tokens>'), in the HSET that ends the
-- turn.
local tokens = {}
local used_in, used_out = tonumber(ARGV[12]), tonumber(ARGV[13])
if used_in > 0 or used_out > 0 then
  local day, today = string.format('%d', math.floor(tonumber(p.now) / 86400000)), 0
  local sep = r.tokens_day and string.find(r.tokens_day, ':', 1, true)
  if sep and string.sub(r.tokens_day, 1, sep - 1) == day then today = tonumber(string.sub(r.tokens_day, sep + 1)) or 0 end
  tokens = {'tokens_in', tostring((tonumber(r.tokens_in) or 0) + used_in),
            'tokens_out', tostring((tonumber(r.tokens_out) or 0) + used_out),
            'tokens_day', day .. ':' .. string.format('%d', today + used_in + used_out)}
end
local paused_in_turn = state == 'PAUSED' and r.paused_from == 'RUNNING'
if state == 'RUNNING' or (paused_in_turn and to ~= 'READY' and to ~= 'BLOCKED') then
  -- (A finished or failed turn leaves a pause nothing to hold.)
  set_state(p, state, to, nil, tokens)
  write(p, 'change', {r.turn or '', by, state, to, event})
elseif paused_in_turn then
  -- Paused during the turn: stay paused; resume lands where the turn led.
  r.paused_from, r.updated_at = to, p.now
  r.version = tostring((tonumber(r.version) or 0) + 1)
  set_fields(p, {'paused_from', to, 'updated_at', p.now, 'version', r.version}, tokens)
else
  -- Any other state (DONE, FAILED, READY or BLOCKED after a pause and a
  -- resume, PAUSED again after that) was set by someone else during the
  -- turn: the events are kept, the state is theirs.
  r.updated_at = p.now
  set_fields(p, {'updated_at', p.now}, tokens)
end
if closed(r.state) then forget_approvals(p) end -- closed during the turn
-- The turn gives its lease and its wake up. The field is deleted, not
-- emptied: the claim of an older brain sharing this Redis reads any value
-- as a wake entry.
redis.call('DEL', p.lease)
redis.call('HDEL', p.proc, 'wake')
r.wake = false
drop_wake(ARGV[9], ARGV[10])
wake_rule(p)

-- A log that outgrew what the recipe keeps loses its oldest events, in
-- whole blocks of the stream (MAXLEN ~: cheap, and never below keep); the
-- record counts them.
local keep = tonumber(ARGV[14])
if keep > 0 then
  local removed = redis.call('XTRIM', p.events, 'MAXLEN', '~', keep)
  if removed > 0 then set_fields(p, {'trimmed', tostring((tonumber(r.trimmed) or 0) + removed)}) end
end

if ARGV[notify] then
  local a = notify
  local parent = process(KEYS, 5, ARGV[a], ARGV[a + 1], p.now, p.at)
  post(parent, ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], 0, nil, nil, ARGV[a + 8]) -- 0: a result is never refused
end
-- What the script wrote after the caller's events (the state change, an
-- unblocking one): the caller cannot know it otherwise. Gapless, nothing
-- came between.
local made = {}
if gapless == '1' then made = p.made or {} end
return {'OK', status(p), gapless, ids, made}

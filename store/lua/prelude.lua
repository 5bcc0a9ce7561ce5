-- prelude.lua is the first part of the prelude put in front of every script
-- of package store (scripts.go prelude: prelude.lua, lifecycle.lua, then
-- inbox.lua), so that what they share exists exactly once on the Lua side.
-- This part holds the key layout, the process context, the events scripts
-- write themselves, the record and the lease; lifecycle.lua holds the
-- lifecycle subset and inbox.lua the wake queue, the wake rule and the post
-- semantics. A part uses only what the parts before it define.

-- Key layout. keys.go builds the same names; TestLuaKeyLayout compares them.
-- Every key a script touches is in one partition, whose keys all start with
-- its base ('brain:{tag}:', the caller passes it): p.base for a process.
local GROUP = 'nodes'
local function state_key(p, state) return p.base .. 'state:' .. state end
local function owner_key(p, owner) return p.base .. 'owner:' .. owner end
local function workers_key(p) return p.base .. 'workers:' .. p.pid end
-- approvals_key: the calls of p that wait for approval, each valued who
-- may decide it ('user' or 'operator') until it is decided, then '1'.
-- waiting_key: the processes of p's partition that have some.
local function approvals_key(p) return p.base .. 'approvals:' .. p.pid end
local function waiting_key(p) return p.base .. 'waiting' end
local function wake_key(p, engine) return p.base .. 'wake:' .. engine end
-- bell_key: brain:bell:{tag}:<engine> of wake_key(p, engine) (p.base is
-- 'brain:{tag}:'), touched whenever a wake is queued there: a Cluster's
-- nodes watch that one prefix (store/bell.go).
local function bell_key(p, engine) return 'brain:bell:' .. string.sub(p.base, 7) .. engine end
-- due_key: the partition's timer index, '<pid>|<timer id>' -> due ms.
local function due_key(p) return p.base .. 'due' end
local function keys_of(base, pid)
  return {
    proc = base .. 'proc:' .. pid, inbox = base .. 'inbox:' .. pid, events = base .. 'events:' .. pid,
    idem = base .. 'idem:' .. pid, lease = base .. 'lease:' .. pid, timers = base .. 'timers:' .. pid,
  }
end

-- process returns the context the functions below work on: the keys of
-- process pid, which the caller passed from keys[first] on in the order of
-- keys.go processKeys (proc, events, lease, inbox, idem, timers; a script
-- that needs only the first few is passed only those, and the others are
-- nil), the base of its partition's keys and the time from the Go clock,
-- as unix ms (now, for records and indexes) and as events carry it (at).
local function process(keys, first, pid, base, now, at)
  return {
    proc = keys[first], events = keys[first + 1], lease = keys[first + 2],
    inbox = keys[first + 3], idem = keys[first + 4], timers = keys[first + 5],
    pid = pid, base = base, now = now, at = at,
  }
end

-- render fills the placeholders of a template (TPL): its parts are literal
-- JSON and placeholders, alternating; a placeholder is the position of its
-- value in vals (the template's values in the order of templateValues in
-- event.go), 0 for p's time, and becomes the JSON encoding of that value.
-- Go builds the whole event; Lua only supplies what changes between calls
-- (a sender, a turn id, the time), and no pattern is matched (measured: a
-- gsub over the template cost Redis ~5 µs per event).
local PARTS = {} -- render's scratch: reused, never grown twice
local function render(p, tpl, vals)
  local out = PARTS
  for i = 1, #tpl, 2 do
    out[i] = tpl[i]
    local at = tpl[i + 1]
    if at == 0 then
      out[i + 1] = cjson.encode(p.at)
    elseif at then
      out[i + 1] = cjson.encode(vals[at])
    end
  end
  return table.concat(out, '', 1, #tpl)
end

-- message returns the inbox message whose stream entry has fields flat,
-- which post writes in this order.
local function message(flat)
  return {kind = flat[2], from = flat[4], content = flat[6]}
end

-- fields turns a flat {k1, v1, k2, v2} reply into a table.
local function fields(flat)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end

-- sender names who sent an inbox message: its from, else its kind.
local function sender(msg)
  if msg.from ~= nil and msg.from ~= '' then return msg.from end
  return msg.kind
end

local function append(p, json)
  return redis.call('XADD', p.events, '*', 'e', json)
end

-- write appends the event template name renders with vals (its values in
-- the order of templateValues in event.go) and notes what it made, in
-- order (p.made: rows of the event's id, the template's name and its
-- values), so that a reply can carry the values from which Go builds the
-- events (templates.build) instead of their JSON: a string read into Lua,
-- or returned from it, costs Redis, and so does each element of a reply.
local function write(p, name, vals)
  local id = append(p, render(p, TPL[name], vals))
  p.made = p.made or {nil, nil, nil, nil} -- sized once (see rec)
  p.made[#p.made + 1] = {id, name, unpack(vals)}
  return id
end

-- ends_at returns '1' when the log holds n events, else '0' (and '0'
-- without looking when n is ''): the log only grows while a claim holds
-- the lease (a commit trims it, the last write of a turn), so a writer
-- that knew it when it had n events then knows it up to what it appends.
-- XLEN is a number; reading the last entry instead costs its JSON.
local function ends_at(p, n)
  if n == '' then return '0' end
  if redis.call('XLEN', p.events) == tonumber(n) then return '1' end
  return '0'
end

-- The record fields the functions here read. rec loads them with one
-- HMGET the first time a script asks (a missing field is false, as HGET
-- gives) and the functions that write them keep p.rec current, so a script
-- reads its record once. A script that writes one of them itself must
-- update p.rec too. version is loaded so that a new state and its version
-- go in one HSET (a call of its own costs more than a field read);
-- updated_at is only noted when written, for status. The table is built
-- whole: one that grows field by field is rehashed as it grows (measured
-- with callgrind: a tenth of what a post costs Redis).
local function rec(p)
  if p.rec == nil then
    local v = redis.call('HMGET', p.proc, 'state', 'queued', 'engine', 'created_at', 'paused_from', 'fence', 'wake',
      'turn', 'version', 'tokens_in', 'tokens_out', 'trimmed', 'tokens_day', 'waiting_for')
    p.rec = {state = v[1], queued = v[2], engine = v[3], created_at = v[4], paused_from = v[5], fence = v[6],
      wake = v[7], turn = v[8], version = v[9], tokens_in = v[10], tokens_out = v[11], trimmed = v[12],
      tokens_day = v[13], waiting_for = v[14]}
  end
  return p.rec
end

-- status returns what a turn can change of p's record, as HGETALL lists
-- fields: all a caller that has the rest of the record needs (Go reads it
-- with Record.setStatus).
local STATUS_FIELDS = {'state', 'paused_from', 'queued', 'version', 'updated_at', 'tokens_in', 'tokens_out', 'trimmed',
  'tokens_day', 'waiting_for', 'approvals'}
local function status(p)
  local r = rec(p)
  if not r.updated_at then r.updated_at = redis.call('HGET', p.proc, 'updated_at') end
  if r.waiting_for and r.approvals == nil then r.approvals = redis.call('HGET', p.proc, 'approvals') end
  local flat = {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil} -- sized once (see rec)
  for _, name in ipairs(STATUS_FIELDS) do
    if r[name] then
      flat[#flat + 1] = name
      flat[#flat + 1] = r[name]
    end
  end
  return flat
end

-- set_fields sets the record fields fields and extra ({name, value, ...};
-- extra may be nil) in one HSET and notes them in p.rec. It appends extra
-- to fields.
local function set_fields(p, fields, extra)
  local r = rec(p)
  for i = 1, #fields, 2 do r[fields[i]] = fields[i + 1] end
  if extra then
    for i = 1, #extra, 2 do
      fields[#fields + 1], fields[#fields + 2] = extra[i], extra[i + 1]
      r[extra[i]] = extra[i + 1]
    end
  end
  redis.call('HSET', p.proc, unpack(fields))
end

-- set_state moves the process to state to (paused_from exists only while
-- PAUSED), bumps its version and moves it in the state index. extra, when
-- given, lists more fields to set with them ({name, value, ...}), in the
-- same HSET.
local function set_state(p, from, to, paused_from, extra)
  local r = rec(p)
  local fields = {'state', to, 'updated_at', p.now, 'version', tostring((tonumber(r.version) or 0) + 1),
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil} -- sized once (see rec) for paused_from and extra
  if to == 'PAUSED' and paused_from ~= nil and paused_from ~= '' then
    fields[#fields + 1], fields[#fields + 2] = 'paused_from', paused_from
  elseif r.paused_from then
    redis.call('HDEL', p.proc, 'paused_from')
    r.paused_from = false
  end
  set_fields(p, fields, extra)
  if from ~= to then
    redis.call('ZREM', state_key(p, from), p.pid)
    redis.call('ZADD', state_key(p, to), r.created_at, p.pid)
  end
end

-- fenced reports whether the lease and the fencing token of p are still
-- those of the claim that holds lease value and token; fence is the
-- record's token as the caller read it (commit loads the record anyway,
-- checkpoint needs only that field).
local function fenced(p, value, token, fence)
  return redis.call('GET', p.lease) == value and fence == token
end

-- signal tells the node whose turn of p runs, if one does (the lease's
-- holder), that something reached the turn: 'halt' (paused, stopped or
-- failed: end the turn now) or 'interrupt' (a message that cuts the model
-- call in flight). A message on the node's channel (keys.go
-- NodeChannel), '<pid> <what>': Pub/Sub may lose it, so the node also
-- learns of a halt when it renews the lease, and of a message at the next
-- checkpoint.
local function signal(p, what)
  local holder = redis.call('GET', p.lease)
  if not holder then return end
  local bar = string.find(holder, '|', 1, true)
  if not bar then return end
  redis.call('PUBLISH', 'brain:node:' .. string.sub(holder, 1, bar - 1), p.pid .. ' ' .. what)
end

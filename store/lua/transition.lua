-- transition.lua: an operator's or user's transition, computed in Go by
-- lifecycle.Fire, written if the record's version has not moved.
-- KEYS: the process's keys.
-- ARGV: pid, base (of its partition's keys), now, at, expected version, from, to,
--       paused_from, state_change event (JSON), wake rule ('1'/'0')
-- Returns {'NOTFOUND'}, {'CONFLICT'} or {'OK', record}.
local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
local version = rec(p).version
if not version then return {'NOTFOUND'} end
if version ~= ARGV[5] then return {'CONFLICT'} end
set_state(p, ARGV[6], ARGV[7], ARGV[8])
-- Paused, stopped or failed while a turn runs: its node ends it now.
if ARGV[6] == 'RUNNING' then signal(p, 'halt') end
if closed(ARGV[7]) then forget_approvals(p) end -- stopped: nothing waits for a decision
append(p, ARGV[9])
if ARGV[10] == '1' then wake_rule(p) end
return {'OK', redis.call('HGETALL', p.proc)}

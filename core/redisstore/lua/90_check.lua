-- The dispatcher: one or more checks, each of one key's policies (or of a
-- multi-key check's keys), each decided atomically and all-or-nothing on its
-- own. A script runs without interleaving, so the checks of one call run one
-- after another exactly as if each were its own call.
--
-- A check's KEYS are the states of its policies, in order, after the KEYS of
-- the checks before it (built in Go; this script never builds a key). Every
-- policy is evaluated first; new states are written only if every one admits
-- the check. A denied check or a peek writes nothing. A check's reply is five
-- integers per policy: allowed (1 or 0), remaining, retry after, reset after
-- and delay, the durations in microseconds. When a call carries several
-- checks, a check that fails (a key of the wrong type, say) answers with its
-- error text, one string, in place of its numbers, and the others still run.

-- The check being decided: its keys follow KEYS[ck], the numbers of their
-- policies follow ARGV[cr], cs arguments apart (1, or 2 when each key's
-- cost follows its policy number), its time is cnow, and its reply goes
-- into out from out[co + 1]. Plain upvalues rather than closures made per
-- check.
local ck, cr, cs, cnow, co = 0, 0, 1, 0, 0
local out = {}

-- deciders[code] and adjusters[code] are the functions of the algorithm of
-- that code, which loaders[code](code) defines and returns. A function
-- definition runs again on every call, making a closure, so the algorithms
-- are loaded only for the codes of the call's policies.
local loaders = {load_fixed_window, load_sliding_log, load_sliding_window, load_buckets, load_gcra,
  load_buckets, load_fixed_window, load_sliding_window}
local deciders, adjusters = {}, {}

-- decide runs the algorithm of the check's key i for units.
local function decide(i, units, write)
  local pb = 4 + 6 * (tonumber(ARGV[cr + cs * (i - 1) + 1]) - 1)
  local f = deciders[P[pb]]
  if not f then error('ratelimit: unknown algorithm code') end
  return f(KEYS[ck + i], pb, units, cnow, write)
end

-- adjust applies a refund (units < 0) of a charge taken at at, or a
-- charge, to the check's key i; a charge with at other than now renews the
-- charge taken at at, refunded first (algo.Adjust).
local function adjust(i, units, at)
  if units > 0 and at ~= cnow then adjust(i, -units, at) end
  local pb = 4 + 6 * (tonumber(ARGV[cr + 3 * (i - 1) + 1]) - 1)
  local f = adjusters[P[pb]]
  if not f then error('ratelimit: unknown algorithm code') end
  return f(KEYS[ck + i], pb, units, at, cnow)
end

local function put(i, allowed, remaining, retry, reset, delay)
  local r = co + 5 * (i - 1)
  out[r + 1], out[r + 2], out[r + 3], out[r + 4], out[r + 5] = allowed, remaining, retry, reset, delay
end

-- units returns the cost of the current check's key i: the check's cost,
-- or the key's own when the check's is -1.
local function units(cost, i)
  if cost < 0 then return tonumber(ARGV[cr + 2 * i]) end
  return cost
end

-- check decides the current check (ck, cr, cs, cnow, co) of count keys.
local function check(cost, count)
  if cost == -2 then
    -- Refunds and charges (OpRefund, OpCharge): each key's signed units and
    -- the charge's instant follow its policy number. A key named twice is
    -- one state, adjusted once. Then every key reports as a peek does.
    for i = 1, count do
      local seen = false
      for j = 1, i - 1 do
        if KEYS[ck + j] == KEYS[ck + i] then seen = true end
      end
      if not seen then
        local a = cr + 3 * (i - 1)
        adjust(i, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]))
      end
    end
    cost = 0
  end
  if cost == 0 then
    -- Peek: the state as it stands, and whether one unit would pass.
    for i = 1, count do
      local _, remaining, _, reset = decide(i, 0, false)
      local allowed, _, retry = decide(i, 1, false)
      put(i, allowed, remaining, retry, reset, 0)
    end
    return
  end

  if count == 1 then
    put(1, decide(1, units(cost, 1), true))
    return
  end

  local all = true
  for i = 1, count do
    local allowed, remaining, retry, reset, delay = decide(i, units(cost, i), false)
    put(i, allowed, remaining, retry, reset, delay)
    if allowed == 0 then all = false end
  end
  if all then
    -- Write every state. Nothing has changed since the evaluation above, so
    -- each policy decides the same again. A policy named twice is one state
    -- and consumes once.
    for i = 1, count do
      local seen = false
      for j = 1, i - 1 do
        if KEYS[ck + j] == KEYS[ck + i] then seen = true end
      end
      if not seen then decide(i, units(cost, i), true) end
    end
  else
    -- Denied: nothing is written, and policies that had room report the
    -- state as it stands.
    for i = 1, count do
      if out[co + 5 * (i - 1) + 1] == 1 then
        local allowed, remaining, retry, reset = decide(i, 0, false)
        put(i, allowed, remaining, retry, reset, 0)
      end
    end
  end
end

-- The layout is checked whole before anything runs.
local checks, policies = tonumber(ARGV[2]), tonumber(ARGV[3])
if not checks or checks < 1 or not policies or policies < 1 then
  return redis.error_reply('ERR ratelimit: want the numbers of checks and policies in ARGV[2] and ARGV[3]')
end
local nargs, nkeys, first = #ARGV, 0, 4 + 6 * policies
local counts = {} -- each check's number of keys and cost, parsed once: counts[2c - 1], counts[2c]
local p = first
for c = 1, checks do
  if p + 2 > nargs then
    return redis.error_reply('ERR ratelimit: arguments end inside a check')
  end
  local cost, count = tonumber(ARGV[p + 1]), tonumber(ARGV[p + 2])
  if not cost or not count then
    return redis.error_reply('ERR ratelimit: a check\'s cost and number of keys are numbers')
  end
  counts[2 * c - 1], counts[2 * c] = count, cost
  nkeys = nkeys + count
  if cost == -1 then count = 2 * count end -- a cost after each policy number
  if cost == -2 then count = 3 * count end -- units and an instant after each
  p = p + 3 + count
end
if p ~= nargs + 1 or nkeys ~= #KEYS then
  return redis.error_reply('ERR ratelimit: want 6 arguments per policy, 3 per check and one key and policy number (and, for a check of cost -1, its cost; of cost -2, its units and instant) per key')
end
for b = 4, first - 1, 6 do
  local code = tonumber(ARGV[b])
  P[b] = code
  if not deciders[code] and loaders[code] then
    deciders[code], adjusters[code] = loaders[code](code)
  end
  local lo, hi = reads(code)
  for k = b + lo, b + hi do
    P[k] = tonumber(ARGV[k])
  end
end

if checks == 1 then
  local cost = counts[2]
  ck, cr, cnow, co = 0, first + 2, tonumber(ARGV[first]), 0
  if cost == -1 then cs = 2 elseif cost == -2 then cs = 3 end
  check(cost, counts[1])
  return out
end

-- errtext is the message of an error a check raised: redis.call raises a
-- table with an err field, error() a string.
local function errtext(e)
  if type(e) == 'table' and type(e.err) == 'string' then return e.err end
  if type(e) == 'string' then return e end
  return 'ERR ratelimit: a check failed'
end

p = first
for c = 1, checks do
  local count, cost = counts[2 * c - 1], counts[2 * c]
  cs = 1
  if cost == -1 then cs = 2 elseif cost == -2 then cs = 3 end
  cr, cnow, co = p + 2, tonumber(ARGV[p]), #out
  local ok, e = pcall(check, cost, count)
  if not ok then
    for i = #out, co + 1, -1 do out[i] = nil end
    out[co + 1] = errtext(e)
  end
  ck = ck + count
  p = p + 3 + cs * count
end
return out

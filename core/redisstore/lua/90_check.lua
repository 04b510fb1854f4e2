-- The check: one key, all its policies, one cost, decided atomically.
--
-- KEYS[i] is the state of policy i (built in Go; this script never builds a
-- key). Every policy is evaluated first; new states are written only if
-- every one admits the check. A denied check or a peek writes nothing. The
-- reply holds five integers per policy: allowed (1 or 0), remaining, retry
-- after, reset after and delay, the durations in microseconds.

local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local count = #KEYS
if #ARGV ~= 3 + 7 * count then
  return redis.error_reply('ERR ratelimit: want 7 arguments per key')
end

-- decide runs policy i's algorithm for cost units; see 00_common.lua.
local function decide(i, units, write)
  local b = 4 + 7 * (i - 1)
  local code = tonumber(ARGV[b])
  if code == 5 then return gcra(KEYS[i], b, units, now, write) end
  if code == 1 then return fixed_window(KEYS[i], b, units, now, write) end
  if code == 2 then return sliding_log(KEYS[i], b, units, now, write) end
  if code == 3 then return sliding_window(KEYS[i], b, units, now, write) end
  if code == 4 then return token_bucket(KEYS[i], b, units, now, write) end
  if code == 6 then return leaky_bucket(KEYS[i], b, units, now, write) end
  error('ratelimit: unknown algorithm code')
end

local reply = {}
local function put(i, allowed, remaining, retry, reset, delay)
  local r = 5 * (i - 1)
  reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5] = allowed, remaining, retry, reset, delay
end

if cost == 0 then
  -- Peek: the state as it stands, and whether one unit would pass.
  for i = 1, count do
    local _, remaining, _, reset = decide(i, 0, false)
    local allowed, _, retry = decide(i, 1, false)
    put(i, allowed, remaining, retry, reset, 0)
  end
  return reply
end

if count == 1 then
  put(1, decide(1, cost, true))
  return reply
end

local all = true
for i = 1, count do
  local allowed, remaining, retry, reset, delay = decide(i, cost, false)
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
      if KEYS[j] == KEYS[i] then seen = true end
    end
    if not seen then decide(i, cost, true) end
  end
else
  -- Denied: nothing is written, and policies that had room report the state
  -- as it stands.
  for i = 1, count do
    if reply[5 * (i - 1) + 1] == 1 then
      local allowed, remaining, retry, reset = decide(i, 0, false)
      put(i, allowed, remaining, retry, reset, 0)
    end
  end
end
return reply

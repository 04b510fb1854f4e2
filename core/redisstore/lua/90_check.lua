-- The check: one key, all its policies, one cost, decided atomically.
--
-- KEYS[i] is the state of policy i (built in Go; this script never builds a
-- key). ARGV[1] is now in microseconds, ARGV[2] the cost (0 means peek),
-- ARGV[3] a margin in milliseconds added to every TTL, then six numbers per
-- policy: algorithm code, limit, window, interval, tolerance and window start
-- (floor(now / window) * window).
--
-- Every policy is evaluated first; new states are written only if every one
-- admits the check. A denied check or a peek writes nothing. The reply holds
-- five integers per policy: allowed (1 or 0), remaining, retry after, reset
-- after and delay, the durations in microseconds.

local algorithms = {
  {load = fixed_window_load, decide = fixed_window_decide, store = fixed_window_store},
  {load = sliding_log_load, decide = sliding_log_decide, store = sliding_log_store},
  {load = sliding_window_load, decide = sliding_window_decide, store = sliding_window_store},
  {load = token_bucket_load, decide = token_bucket_decide, store = token_bucket_store},
  {load = gcra_load, decide = gcra_decide, store = gcra_store},
  {load = leaky_bucket_load, decide = leaky_bucket_decide, store = leaky_bucket_store},
}

local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
local count = #KEYS
if #ARGV ~= 3 + 6 * count then
  return redis.error_reply('ERR ratelimit: want 6 arguments per key')
end

local reply = {}
local algs, params, states, nexts = {}, {}, {}, {}
local all = true
for i = 1, count do
  local b = 4 + 6 * (i - 1)
  local a = algorithms[tonumber(ARGV[b])]
  if a == nil then
    return redis.error_reply('ERR ratelimit: unknown algorithm code')
  end
  local p = {
    limit = tonumber(ARGV[b + 1]),
    window = tonumber(ARGV[b + 2]),
    interval = tonumber(ARGV[b + 3]),
    tolerance = tonumber(ARGV[b + 4]),
    start = tonumber(ARGV[b + 5]),
  }
  local st = a.load(KEYS[i])
  local r = 5 * (i - 1)
  if cost == 0 then
    -- Peek: the state as it stands, and whether one unit would pass.
    local _, remaining, _, reset = a.decide(p, st, 0, now)
    local allowed, _, retry = a.decide(p, st, 1, now)
    reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5] = allowed, remaining, retry, reset, 0
  else
    local allowed, remaining, retry, reset, delay, nxt = a.decide(p, st, cost, now)
    reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5] = allowed, remaining, retry, reset, delay
    if allowed == 0 then all = false end
    algs[i], params[i], states[i], nexts[i] = a, p, st, nxt
  end
end

if cost > 0 then
  if all then
    -- A policy listed twice is one state: it consumes once.
    local written = {}
    for i = 1, count do
      if not written[KEYS[i]] then
        written[KEYS[i]] = true
        -- The state may be dropped ResetAfter from now: that is the TTL,
        -- in milliseconds rounded up.
        local ttl = max(idiv(reply[5 * (i - 1) + 4] + 999, 1000), 1) + margin
        algs[i].store(KEYS[i], nexts[i], ttl)
      end
    end
  else
    -- Denied: nothing is written, and policies that had room report the
    -- state as it stands.
    for i = 1, count do
      local r = 5 * (i - 1)
      if reply[r + 1] == 1 then
        local allowed, remaining, retry, reset = algs[i].decide(params[i], states[i], 0, now)
        reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5] = allowed, remaining, retry, reset, 0
      end
    end
  end
end
return reply

-- Sliding log: algo.SlidingLog and algo.CommitSlidingLog. State: a list of
-- the timestamps of admitted units, oldest first, one element per unit (so
-- two units admitted in the same microsecond are two elements).

local function sliding_log_load(key)
  return {key = key, len = redis.call('LLEN', key)}
end

-- sliding_log_first_after is Log.firstAfter: the index of the oldest entry
-- greater than cutoff, by binary search over the sorted list.
local function sliding_log_first_after(st, cutoff)
  local lo, hi = 0, st.len
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if tonumber(redis.call('LINDEX', st.key, mid)) <= cutoff then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return lo
end

local function sliding_log_newest(st)
  if st.len == 0 then return 0 end
  return tonumber(redis.call('LINDEX', st.key, -1))
end

local function sliding_log_decide(p, st, cost, now)
  local cutoff = now - p.window
  local first = sliding_log_first_after(st, cutoff)
  local n = st.len - first
  local newest = sliding_log_newest(st)
  local ts = max(now, newest)
  if n + cost <= p.limit then
    local reset = 0
    if cost > 0 then
      reset = ts + p.window - now
    elseif n > 0 then
      reset = newest + p.window - now
    end
    return 1, p.limit - n - cost, 0, reset, 0, {ts = ts, cost = cost, cutoff = cutoff}
  end
  local k = n + cost - p.limit -- entries that must leave the window first
  local oldest_to_go = tonumber(redis.call('LINDEX', st.key, first + k - 1))
  return 0, p.limit - n, oldest_to_go + p.window - now, newest + p.window - now, 0, nil
end

-- sliding_log_store drops the entries that have left the window and appends
-- cost entries at ts. Appends go in batches to stay within Lua's stack.
local function sliding_log_store(key, st, ttl)
  local len = redis.call('LLEN', key)
  if len > 0 then
    local k = sliding_log_first_after({key = key, len = len}, st.cutoff)
    if k > 0 then
      redis.call('LTRIM', key, k, -1)
    end
  end
  local left = st.cost
  local batch = {}
  while left > 0 do
    local m = math.min(left, 1000)
    if #batch ~= m then
      batch = {}
      for i = 1, m do batch[i] = st.ts end
    end
    redis.call('RPUSH', key, unpack(batch))
    left = left - m
  end
  redis.call('PEXPIRE', key, ttl)
end

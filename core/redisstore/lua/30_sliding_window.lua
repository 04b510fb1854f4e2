-- Sliding window counter: algo.SlidingWindow. State: hash {s = start of the
-- current window, p = previous window's count, c = current window's count}.
-- p.start is floor(now / window) * window, computed in Go.

-- sw_estimate is algo.swEstimate: the same IEEE operations in the same order,
-- so Go and Lua round identically.
local function sw_estimate(prev, curr, window, elapsed)
  return prev * (window - elapsed) / window + curr
end

local function sw_fits(prev, curr, window, elapsed, cost, limit)
  return sw_estimate(prev, curr, window, elapsed) + cost <= limit
end

-- sw_first_fit is algo.swFirstFit: the smallest offset in [lo, hi] at which
-- cost fits, or hi + 1.
local function sw_first_fit(prev, curr, window, lo, hi, cost, limit)
  while lo <= hi do
    local mid = lo + math.floor((hi - lo) / 2)
    if sw_fits(prev, curr, window, mid, cost, limit) then
      hi = mid - 1
    else
      lo = mid + 1
    end
  end
  return lo
end

local function sw_reset(start, window, prev, curr, now)
  if curr > 0 then return start + 2 * window - now end
  if prev > 0 then return start + window - now end
  return 0
end

-- floor_non_neg is algo.floorNonNeg.
local function floor_non_neg(x)
  if x <= 0 then return 0 end
  return math.floor(x)
end

local function sliding_window_load(key)
  local h = redis.call('HMGET', key, 's', 'p', 'c')
  return {start = num(h[1]), prev = num(h[2]), curr = num(h[3])}
end

local function sliding_window_decide(p, st, cost, now)
  local w, limit = p.window, p.limit
  local start = p.start
  local at = now -- the instant the estimate is taken at
  local prev, curr = 0, 0
  if st.prev ~= 0 or st.curr ~= 0 then
    if st.start > start then -- caller's clock is behind
      start, at = st.start, st.start
    end
    if st.start == start then
      prev, curr = st.prev, st.curr
    elseif st.start == start - w then
      prev = st.curr
    end
  end
  local elapsed = at - start
  local est = sw_estimate(prev, curr, w, elapsed)
  if est + cost <= limit then
    local remaining = floor_non_neg(limit - est - cost)
    curr = curr + cost
    return 1, remaining, 0, sw_reset(start, w, prev, curr, now), 0, {start = start, prev = prev, curr = curr}
  end
  local remaining = floor_non_neg(limit - est)
  local reset = sw_reset(start, w, prev, curr, now)
  local retry
  local e = sw_first_fit(prev, curr, w, elapsed + 1, w - 1, cost, limit)
  if e < w then
    retry = start + e - now
  else
    -- Next window: the current count becomes the previous one.
    e = sw_first_fit(curr, 0, w, 0, w, cost, limit)
    retry = start + w + e - now
  end
  return 0, remaining, retry, reset, 0, nil
end

local function sliding_window_store(key, st, ttl)
  redis.call('HSET', key, 's', st.start, 'p', st.prev, 'c', st.curr)
  redis.call('PEXPIRE', key, ttl)
end

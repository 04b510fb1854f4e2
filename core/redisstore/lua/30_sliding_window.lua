-- Sliding window counter: algo.SlidingWindow. State: hash {s = start of the
-- current window, p = previous window's count, c = current window's count}.

-- sw_fits is algo.swFits. The estimate inside is algo.swEstimate, the same
-- IEEE operations in the same order, so Go and Lua round identically.
local function sw_fits(prev, curr, window, e, cost, limit)
  return prev * (window - e) / window + curr + cost <= limit
end

-- sw_first_fit is algo.swFirstFit: the smallest offset in [lo, hi] at which
-- cost fits, or hi + 1. The guess where the linear estimate reaches the
-- limit is checked first; the binary search finishes only when rounding put
-- it off.
local function sw_first_fit(prev, curr, window, lo, hi, cost, limit)
  if prev > 0 and lo <= hi then
    local e = window - floor((limit - curr - cost) * window / prev)
    if e < lo then e = lo elseif e > hi + 1 then e = hi + 1 end
    if e > hi or sw_fits(prev, curr, window, e, cost, limit) then
      if e == lo or not sw_fits(prev, curr, window, e - 1, cost, limit) then
        return e
      end
      hi = e - 1
    else
      lo = e + 1
    end
  end
  while lo <= hi do
    local mid = lo + floor((hi - lo) / 2)
    if sw_fits(prev, curr, window, mid, cost, limit) then
      hi = mid - 1
    else
      lo = mid + 1
    end
  end
  return lo
end

-- sw_reset is algo.swReset.
local function sw_reset(start, window, prev, curr, now)
  if curr > 0 then return start + 2 * window - now end
  if prev > 0 then return start + window - now end
  return 0
end

-- sw_floor is algo.floorNonNeg.
local function sw_floor(x)
  if x <= 0 then return 0 end
  return floor(x)
end

local function sliding_window(key, b, cost, now, write)
  local limit, w = P[b + 1], P[b + 2]
  local start = window_start(now, w)
  local h = redis.call('HMGET', key, 's', 'p', 'c')
  local st_start, st_prev, st_curr = tonumber(h[1]) or 0, tonumber(h[2]) or 0, tonumber(h[3]) or 0
  local at = now -- the instant the estimate is taken at
  local prev, curr = 0, 0
  if st_prev ~= 0 or st_curr ~= 0 then
    if st_start > start then -- caller's clock is behind
      start, at = st_start, st_start
    end
    if st_start == start then
      prev, curr = st_prev, st_curr
    elseif st_start == start - w then
      prev = st_curr
    end
  end
  local elapsed = at - start
  local est = prev * (w - elapsed) / w + curr
  if est + cost <= limit then
    local remaining = sw_floor(limit - est - cost)
    curr = curr + cost
    local reset = sw_reset(start, w, prev, curr, now)
    if write then
      if curr > cost then
        -- The stored windows go on: start and prev stand, and so does the
        -- expiry, the end of the next window plus the margin, which the
        -- check that first counted in this window wrote.
        redis.call('HSET', key, 'c', int(curr))
      else
        redis.call('HSET', key, 's', int(start), 'p', int(prev), 'c', int(curr))
        redis.call('PEXPIRE', key, ttl(reset))
      end
    end
    return 1, remaining, 0, reset, 0
  end
  local retry
  local e = sw_first_fit(prev, curr, w, elapsed + 1, w - 1, cost, limit)
  if e < w then
    retry = start + e - now
  else
    -- Next window: the current count becomes the previous one. At its end
    -- the estimate is 0, so a fit always exists by then.
    e = sw_first_fit(curr, 0, w, 0, w, cost, limit)
    retry = start + w + e - now
  end
  return 0, sw_floor(limit - est), retry, sw_reset(start, w, prev, curr, now), 0
end

-- sliding_window_adjust is SlidingWindowState.Adjust: a charge adds to the
-- current window's count; a refund takes from the count of the window at
-- fell in while that window still counts.
local function sliding_window_adjust(key, b, units, at, now)
  local w = P[b + 2]
  local start = window_start(now, w)
  local h = redis.call('HMGET', key, 's', 'p', 'c')
  local st_start, st_prev, st_curr = tonumber(h[1]) or 0, tonumber(h[2]) or 0, tonumber(h[3]) or 0
  local prev, curr = 0, 0
  if st_prev ~= 0 or st_curr ~= 0 then
    if st_start > start then start = st_start end
    if st_start == start then
      prev, curr = st_prev, st_curr
    elseif st_start == start - w then
      prev = st_curr
    end
  end
  if units > 0 then
    curr = math.min(curr + units, 1000000000000000)
  elseif at >= start and at < start + w then
    curr = max(curr + units, 0)
  elseif at >= start - w and at < start then
    prev = max(prev + units, 0)
  else
    return
  end
  if prev == 0 and curr == 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, 's', int(start), 'p', int(prev), 'c', int(curr))
  redis.call('PEXPIRE', key, ttl(sw_reset(start, w, prev, curr, now)))
end

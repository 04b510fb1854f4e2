-- Sliding window counter: algo.SlidingWindow. State: hash {s = start of the
-- current window, p = previous window's count, c = current window's count}.
-- Code 3 aligns windows to multiples of their length; code 8 (the
-- calendar) receives the start and length of the window now falls in and
-- the lengths of the next and the previous one, computed in Go.

local function load_sliding_window()
  -- sw_est is algo.swEstimate, the same IEEE operations in the same order,
  -- so Go and Lua round identically.
  local function sw_est(prev, curr, window, e)
    if e >= window then return curr end
    return prev * (window - e) / window + curr
  end

  -- sw_fits is algo.swFits.
  local function sw_fits(prev, curr, window, e, cost, limit)
    return sw_est(prev, curr, window, e) + cost <= limit
  end

  -- sw_first_fit is algo.swFirstFit: the smallest offset in [lo, hi] at which
  -- cost fits, or hi + 1. Without a previous count the estimate stays put, so
  -- lo answers for all. Otherwise the guess where the linear estimate reaches
  -- the limit is checked first; the binary search finishes only when rounding
  -- put it off.
  local function sw_first_fit(prev, curr, window, lo, hi, cost, limit)
    if prev == 0 and lo <= hi then
      if sw_fits(prev, curr, window, lo, cost, limit) then return lo end
      return hi + 1
    end
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

  -- sw_reset is algo.swReset, for the window of length lc starting at start
  -- after one of length lp.
  local function sw_reset(start, lc, lp, prev, curr, now)
    if curr > 0 then return start + 2 * lc - now end
    if prev > 0 then return max(start + lp - now, 0) end
    return 0
  end

  -- sw_view is algo.swView: the window (start, lc, lp, ln) and the instant
  -- the estimate is taken at, and the previous and current counts, from the
  -- stored state (st_start, st_prev, st_curr).
  local function sw_view(b, now, st_start, st_prev, st_curr)
    local start, lc, lp, ln = 0, P[b + 2], 0, 0
    if P[b] == 8 then
      start, ln, lp = P[b + 3], P[b + 4], P[b + 5]
    else
      start, lp, ln = window_start(now, lc), lc, lc
    end
    local at, prev, curr = now, 0, 0
    if st_prev ~= 0 or st_curr ~= 0 then
      if st_start > start then -- caller's clock is behind
        start, lc, lp, at = st_start, ln, lc, st_start
      end
      if st_start == start then
        prev, curr = st_prev, st_curr
      elseif st_start == start - lp then
        prev = st_curr
      end
    end
    return start, lc, lp, ln, at, prev, curr
  end

  -- sw_floor is algo.floorNonNeg.
  local function sw_floor(x)
    if x <= 0 then return 0 end
    return floor(x)
  end

  local function sliding_window(key, b, cost, now, write)
    local limit = P[b + 1]
    local h = redis.call('HMGET', key, 's', 'p', 'c')
    local start, lc, lp, ln, at, prev, curr = sw_view(b, now, tonumber(h[1]) or 0, tonumber(h[2]) or 0, tonumber(h[3]) or 0)
    local elapsed = at - start
    local est = sw_est(prev, curr, lp, elapsed)
    if est + cost <= limit then
      local remaining = sw_floor(limit - est - cost)
      curr = curr + cost
      local reset = sw_reset(start, lc, lp, prev, curr, now)
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
    local e = sw_first_fit(prev, curr, lp, elapsed + 1, lc - 1, cost, limit)
    if e < lc then
      retry = start + e - now
    else
      -- Next window: the current count becomes the previous one; at the
      -- start of the one after, both are out.
      retry = start + lc + sw_first_fit(curr, 0, lc, 0, ln - 1, cost, limit) - now
    end
    return 0, sw_floor(limit - est), retry, sw_reset(start, lc, lp, prev, curr, now), 0
  end

  -- sliding_window_adjust is SlidingWindowState.Adjust: a charge adds to the
  -- current window's count; a refund takes from the count of the window at
  -- fell in while that window still counts.
  local function sliding_window_adjust(key, b, units, at, now)
    local h = redis.call('HMGET', key, 's', 'p', 'c')
    local start, lc, lp, _, _, prev, curr = sw_view(b, now, tonumber(h[1]) or 0, tonumber(h[2]) or 0, tonumber(h[3]) or 0)
    if units > 0 then
      curr = math.min(curr + units, 1000000000000000)
    elseif at >= start and at < start + lc then
      curr = max(curr + units, 0)
    elseif at >= start - lp and at < start then
      prev = max(prev + units, 0)
    else
      return
    end
    if prev == 0 and curr == 0 then
      redis.call('DEL', key)
      return
    end
    redis.call('HSET', key, 's', int(start), 'p', int(prev), 'c', int(curr))
    redis.call('PEXPIRE', key, ttl(sw_reset(start, lc, lp, prev, curr, now)))
  end

  return sliding_window, sliding_window_adjust
end

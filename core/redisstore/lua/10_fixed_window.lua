-- Fixed window: algo.FixedWindow. State: hash {s = window start, n = count}.
-- Code 1 aligns windows to multiples of their length; code 7 (the calendar)
-- receives the bounds of the window now falls in, computed in Go, and the
-- length of the next window.

local function load_fixed_window()
  -- fixed_window_view is FixedWindowState.view: the window a check at now
  -- works in (its start and length) and its count.
  local function fixed_window_view(key, b, now)
    local window = P[b + 2]
    local start
    if P[b] == 7 then
      start = P[b + 3]
    else
      start = window_start(now, window)
    end
    local h = redis.call('HMGET', key, 's', 'n')
    local st_start, st_count = tonumber(h[1]) or 0, tonumber(h[2]) or 0
    local n = 0
    if st_count > 0 then
      if st_start > start then -- caller's clock is behind: stay in the newest window
        if P[b] == 7 then window = P[b + 4] end
        start = st_start
      end
      if st_start == start then n = st_count end
    end
    return start, window, n
  end

  local function fixed_window(key, b, cost, now, write)
    local limit = P[b + 1]
    local start, window, n = fixed_window_view(key, b, now)
    local window_end = start + window
    if n + cost <= limit then
      n = n + cost
      local reset = 0
      if n > 0 then reset = window_end - now end
      if write then
        if n > cost then
          -- The stored window goes on: its start and its expiry, the window's
          -- end plus the margin, stand as the check that opened it wrote them.
          redis.call('HSET', key, 'n', int(n))
        else
          redis.call('HSET', key, 's', int(start), 'n', int(n))
          redis.call('PEXPIRE', key, ttl(reset))
        end
      end
      return 1, limit - n, 0, reset, 0
    end
    return 0, max(limit - n, 0), window_end - now, window_end - now, 0
  end

  -- fixed_window_adjust is FixedWindowState.Adjust: a charge (units > 0) adds
  -- to the current window's count; a refund (units < 0) takes from it while
  -- at lies in that window.
  local function fixed_window_adjust(key, b, units, at, now)
    local start, window, n = fixed_window_view(key, b, now)
    if units < 0 then
      if at < start or at >= start + window then return end
      n = max(n + units, 0)
    else
      n = math.min(n + units, 1000000000000000)
    end
    if n == 0 then
      redis.call('DEL', key)
      return
    end
    redis.call('HSET', key, 's', int(start), 'n', int(n))
    redis.call('PEXPIRE', key, ttl(start + window - now))
  end

  return fixed_window, fixed_window_adjust
end

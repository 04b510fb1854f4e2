-- Fixed window: algo.FixedWindow. State: hash {s = window start, n = count}.
-- p.start is floor(now / window) * window, computed in Go.

local function fixed_window_load(key)
  local h = redis.call('HMGET', key, 's', 'n')
  return {start = num(h[1]), count = num(h[2])}
end

local function fixed_window_decide(p, st, cost, now)
  local start = p.start
  local n = 0
  if st.count > 0 then
    if st.start > start then -- caller's clock is behind: stay in the newest window
      start = st.start
    end
    if st.start == start then
      n = st.count
    end
  end
  local window_end = start + p.window
  if n + cost <= p.limit then
    n = n + cost
    local reset = 0
    if n > 0 then reset = window_end - now end
    return 1, p.limit - n, 0, reset, 0, {start = start, count = n}
  end
  return 0, p.limit - n, window_end - now, window_end - now, 0, nil
end

local function fixed_window_store(key, st, ttl)
  redis.call('HSET', key, 's', st.start, 'n', st.count)
  redis.call('PEXPIRE', key, ttl)
end

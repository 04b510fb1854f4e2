-- Sliding log: algo.SlidingLog and algo.CommitSlidingLog. State: a list of
-- the timestamps of admitted units, oldest first, one element per unit (so
-- two units admitted in the same microsecond are two elements).

local function load_sliding_log()
  -- sliding_log_first_after is Log.firstAfter: the index of the oldest of the
  -- len entries greater than cutoff, by binary search over the sorted list.
  -- The oldest entry is tried first: under steady traffic it is still inside
  -- the window, and one LINDEX answers in place of log2(len).
  local function sliding_log_first_after(key, len, cutoff)
    if len == 0 or tonumber(redis.call('LINDEX', key, 0)) > cutoff then
      return 0
    end
    local lo, hi = 1, len
    while lo < hi do
      local mid = floor((lo + hi) / 2)
      if tonumber(redis.call('LINDEX', key, mid)) <= cutoff then
        lo = mid + 1
      else
        hi = mid
      end
    end
    return lo
  end

  -- sliding_log_push appends count entries at ts to the log at key, in
  -- batches that stay within Lua's stack.
  local function sliding_log_push(key, count, ts)
    local left = count
    local batch, entry = {}, int(ts)
    for i = 1, math.min(left, 1000) do batch[i] = entry end
    while left > 0 do
      if left < #batch then
        for i = left + 1, #batch do batch[i] = nil end
      end
      redis.call('RPUSH', key, unpack(batch))
      left = left - #batch
    end
  end

  local function sliding_log(key, b, cost, now, write)
    local limit, window = P[b + 1], P[b + 2]
    local len = redis.call('LLEN', key)
    local cutoff = now - window
    local first = sliding_log_first_after(key, len, cutoff)
    local n = len - first
    local newest, ts = 0, now
    if len > 0 then -- an empty log has no newest entry, also before 1970
      newest = tonumber(redis.call('LINDEX', key, -1))
      ts = max(now, newest)
    end
    if n + cost <= limit then
      local reset = 0
      if cost > 0 then
        reset = ts + window - now
      elseif n > 0 then
        reset = newest + window - now
      end
      if write then
        -- CommitSlidingLog: drop the entries that have left the window at
        -- now, then append cost entries at ts.
        if first > 0 then
          redis.call('LTRIM', key, first, -1)
        end
        sliding_log_push(key, cost, ts)
        redis.call('PEXPIRE', key, ttl(reset))
      end
      return 1, limit - n - cost, 0, reset, 0
    end
    local k = n + cost - limit -- entries that must leave the window first
    local frees_at = tonumber(redis.call('LINDEX', key, first + k - 1))
    return 0, max(limit - n, 0), frees_at + window - now, newest + window - now, 0
  end

  -- sliding_log_adjust is Log.Adjust: a charge drops the entries that have
  -- left the window, appends units entries (at most limit) at now or the
  -- newest entry and keeps the newest limit; a refund removes up to -units
  -- entries at the first timestamp at or after at, unless that charge has
  -- left the window.
  local function sliding_log_adjust(key, b, units, at, now)
    local limit, window = P[b + 1], P[b + 2]
    if units < 0 and at + window <= now then return end
    local len = redis.call('LLEN', key)
    if units < 0 then
      local i = sliding_log_first_after(key, len, at - 1)
      if i >= len then return end
      local ts = redis.call('LINDEX', key, i)
      redis.call('LREM', key, math.min(-units, len), ts)
      return
    end
    local ts = now
    if len > 0 then
      ts = max(now, tonumber(redis.call('LINDEX', key, -1)))
      local first = sliding_log_first_after(key, len, now - window)
      if first > 0 then redis.call('LTRIM', key, first, -1) end
    end
    sliding_log_push(key, math.min(units, limit), ts)
    redis.call('LTRIM', key, int(-limit), -1)
    redis.call('PEXPIRE', key, ttl(ts + window - now))
  end

  return sliding_log, sliding_log_adjust
end

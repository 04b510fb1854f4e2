-- The two buckets, which keep the same state: a hash {u or v = microseconds
-- of backlog, l = last, i = the interval they were written with}; a state
-- of an earlier version has no i, read as the current interval.
--
-- Token bucket: algo.TokenBucket; its backlog, u, is the refill missing
-- (used). Leaky bucket, the queue form: algo.LeakyBucket; its backlog, v,
-- is the draining still to come (level), and P[b + 5] is the policy's
-- MaxDelay in microseconds, 0 for none.

local function load_buckets(code)
  -- reset_at is algo.resetAt: the time from now until a backlog of used
  -- microseconds, counted from last, has drained.
  local function reset_at(last, used, now)
    if used == 0 then return 0 end
    return last + used - now
  end

  -- bucket_read returns a bucket's last and its backlog in field f ('u' for
  -- the token bucket, 'v' for the leaky bucket) as of last, drained to now
  -- and rescaled to interval: now and 0 for none (a zero backlog is empty
  -- whatever last says, also before 1970).
  local function bucket_read(key, f, interval, now)
    local h = redis.call('HMGET', key, f, 'l', 'i')
    local backlog, st_last = tonumber(h[1]) or 0, tonumber(h[2]) or 0
    if backlog <= 0 then return now, 0 end
    local last = max(st_last, now)
    return last, rescale(max(backlog - (last - st_last), 0), tonumber(h[3]) or 0, interval)
  end

  -- bucket_write stores a backlog in field f with its last and interval,
  -- kept until it has drained.
  local function bucket_write(key, f, backlog, last, interval, now)
    redis.call('HSET', key, f, int(backlog), 'l', int(last), 'i', int(interval))
    redis.call('PEXPIRE', key, ttl(reset_at(last, backlog, now)))
  end

  local function token_bucket(key, b, cost, now, write)
    local interval, tolerance = P[b + 3], P[b + 4]
    local last, used = bucket_read(key, 'u', interval, now)
    local need = cost * interval
    if used + need <= tolerance then
      used = used + need
      if write then bucket_write(key, 'u', used, last, interval, now) end
      return 1, idiv(tolerance - used, interval), 0, reset_at(last, used, now), 0
    end
    return 0, idiv(max(tolerance - used, 0), interval), last + used + need - tolerance - now, reset_at(last, used, now), 0
  end

  -- bucket_adjust is the Adjust of both buckets (adjustQueue): the backlog
  -- moves by units intervals, down to empty or past the capacity.
  local function bucket_adjust(key, b, units, at, now)
    local interval, f = P[b + 3], 'v'
    if P[b] == 4 then f = 'u' end -- the token bucket's field
    local last, backlog = bucket_read(key, f, interval, now)
    backlog = add_backlog(backlog, units, interval)
    if backlog == 0 then
      redis.call('DEL', key)
      return
    end
    bucket_write(key, f, backlog, last, interval, now)
  end

  -- leaky_remaining is algo.leakyRemaining.
  local function leaky_remaining(room, level, interval)
    if level > room then return 0 end
    return idiv(room - level, interval) + 1
  end

  local function leaky_bucket(key, b, cost, now, write)
    local interval, tolerance = P[b + 3], P[b + 4]
    local max_delay = P[b + 5]
    local last, backlog = bucket_read(key, 'v', interval, now)
    local room = tolerance - interval
    if max_delay > 0 then room = math.min(room, max_delay - (last - now)) end
    local need = cost * interval
    local wait = last + backlog - now
    if backlog + need <= tolerance and (max_delay == 0 or wait <= max_delay) then
      local level = backlog + need
      if write then bucket_write(key, 'v', level, last, interval, now) end
      return 1, leaky_remaining(room, level, interval), 0, reset_at(last, level, now), wait
    end
    local retry = wait + need - tolerance
    if max_delay > 0 then retry = max(retry, wait - max_delay) end
    return 0, leaky_remaining(room, backlog, interval), retry, reset_at(last, backlog, now), 0
  end

  if code == 6 then return leaky_bucket, bucket_adjust end
  return token_bucket, bucket_adjust
end

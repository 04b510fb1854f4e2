-- Token bucket: algo.TokenBucket. State: hash {u = microseconds of refill
-- missing (used), l = last, i = the interval they were written with}; a
-- state of an earlier version has no i, read as the current interval.

local function token_bucket(key, b, cost, now, write)
  local interval, tolerance = P[b + 3], P[b + 4]
  local h = redis.call('HMGET', key, 'u', 'l', 'i')
  local st_used, st_last = tonumber(h[1]) or 0, tonumber(h[2]) or 0
  local last, used = now, 0
  if st_used > 0 then -- a zero used is a full bucket whatever last says, also before 1970
    last = max(st_last, now)
    used = rescale(max(st_used - (last - st_last), 0), tonumber(h[3]) or 0, interval)
  end
  local need = cost * interval
  if used + need <= tolerance then
    used = used + need
    local reset = reset_at(last, used, now)
    if write then
      redis.call('HSET', key, 'u', int(used), 'l', int(last), 'i', int(interval))
      redis.call('PEXPIRE', key, ttl(reset))
    end
    return 1, idiv(tolerance - used, interval), 0, reset, 0
  end
  return 0, idiv(max(tolerance - used, 0), interval), last + used + need - tolerance - now, reset_at(last, used, now), 0
end

-- token_bucket_adjust is TokenBucketState.Adjust: units tokens taken (a
-- charge, even below empty) or given back up to the burst.
local function token_bucket_adjust(key, b, units, at, now)
  local interval = P[b + 3]
  local h = redis.call('HMGET', key, 'u', 'l', 'i')
  local st_used, st_last = tonumber(h[1]) or 0, tonumber(h[2]) or 0
  local last, used = now, 0
  if st_used > 0 then
    last = max(st_last, now)
    used = rescale(max(st_used - (last - st_last), 0), tonumber(h[3]) or 0, interval)
  end
  used = add_backlog(used, units, interval)
  if used == 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, 'u', int(used), 'l', int(last), 'i', int(interval))
  redis.call('PEXPIRE', key, ttl(reset_at(last, used, now)))
end

-- Token bucket: algo.TokenBucket. State: hash {u = microseconds of refill
-- missing (used), l = last, i = the interval they were written with}; a
-- state of an earlier version has no i, read as the current interval.

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

local function token_bucket(key, b, cost, now, write)
  local interval, tolerance = P[b + 3], P[b + 4]
  local last, used = bucket_read(key, 'u', interval, now)
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
  redis.call('HSET', key, f, int(backlog), 'l', int(last), 'i', int(interval))
  redis.call('PEXPIRE', key, ttl(reset_at(last, backlog, now)))
end

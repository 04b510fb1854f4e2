-- Leaky bucket, the queue form: algo.LeakyBucket. State: hash {v = backlog
-- in microseconds of draining (level), l = last, i = the interval they were
-- written with}; a state of an earlier version has no i, read as the
-- current interval. ARGV[b + 5] is the policy's
-- MaxDelay in microseconds, 0 for none.

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
    local reset = reset_at(last, level, now)
    if write then
      redis.call('HSET', key, 'v', int(level), 'l', int(last), 'i', int(interval))
      redis.call('PEXPIRE', key, ttl(reset))
    end
    return 1, leaky_remaining(room, level, interval), 0, reset, wait
  end
  local retry = wait + need - tolerance
  if max_delay > 0 then retry = max(retry, wait - max_delay) end
  return 0, leaky_remaining(room, backlog, interval), retry, reset_at(last, backlog, now), 0
end

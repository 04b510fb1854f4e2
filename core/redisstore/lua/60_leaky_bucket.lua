-- Leaky bucket, the queue form: algo.LeakyBucket. State: hash {v = backlog
-- in microseconds of draining (level), l = last}.

local function leaky_bucket(key, b, cost, now, write)
  local interval, tolerance = tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4])
  local h = redis.call('HMGET', key, 'v', 'l')
  local st_level, st_last = tonumber(h[1]) or 0, tonumber(h[2]) or 0
  local last = max(st_last, now)
  local backlog = max(st_level - (last - st_last), 0)
  local need = cost * interval
  if backlog + need <= tolerance then
    local level = backlog + need
    local reset = reset_at(last, level, now)
    if write then
      redis.call('HSET', key, 'v', level, 'l', last)
      redis.call('PEXPIRE', key, ttl(reset))
    end
    return 1, idiv(tolerance - level, interval), 0, reset, last + backlog - now
  end
  return 0, idiv(max(tolerance - backlog, 0), interval), last + backlog + need - tolerance - now, reset_at(last, backlog, now), 0
end

-- Leaky bucket, the queue form: algo.LeakyBucket. State: hash {v = backlog
-- in microseconds of draining (level), l = last}.

local function leaky_bucket_load(key)
  local h = redis.call('HMGET', key, 'v', 'l')
  return {level = num(h[1]), last = num(h[2])}
end

local function leaky_bucket_decide(p, st, cost, now)
  local last = max(st.last, now)
  local backlog = max(st.level - (last - st.last), 0)
  local need = cost * p.interval
  if backlog + need <= p.tolerance then
    local level = backlog + need
    return 1, idiv(p.tolerance - level, p.interval), 0, reset_at(last, level, now), last + backlog - now, {level = level, last = last}
  end
  return 0, idiv(p.tolerance - backlog, p.interval), last + backlog + need - p.tolerance - now, reset_at(last, backlog, now), 0, nil
end

local function leaky_bucket_store(key, st, ttl)
  redis.call('HSET', key, 'v', st.level, 'l', st.last)
  redis.call('PEXPIRE', key, ttl)
end

-- Token bucket: algo.TokenBucket. State: hash {u = microseconds of refill
-- missing (used), l = last}. p.interval and p.tolerance come from Go.

local function token_bucket_load(key)
  local h = redis.call('HMGET', key, 'u', 'l')
  return {used = num(h[1]), last = num(h[2])}
end

local function token_bucket_decide(p, st, cost, now)
  local last = max(st.last, now)
  local used = max(st.used - (last - st.last), 0)
  local need = cost * p.interval
  if used + need <= p.tolerance then
    used = used + need
    return 1, idiv(p.tolerance - used, p.interval), 0, reset_at(last, used, now), 0, {used = used, last = last}
  end
  return 0, idiv(p.tolerance - used, p.interval), last + used + need - p.tolerance - now, reset_at(last, used, now), 0, nil
end

local function token_bucket_store(key, st, ttl)
  redis.call('HSET', key, 'u', st.used, 'l', st.last)
  redis.call('PEXPIRE', key, ttl)
end

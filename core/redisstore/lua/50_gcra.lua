-- GCRA: algo.GCRA. State: one string, the theoretical arrival time (TAT);
-- an absent key is a TAT of 0.

local function gcra_load(key)
  return num(redis.call('GET', key))
end

local function gcra_decide(p, tat, cost, now)
  local base = max(tat, now)
  local new_tat = base + cost * p.interval
  local allow_at = new_tat - p.tolerance
  if allow_at <= now then
    return 1, idiv(max(p.tolerance - (new_tat - now), 0), p.interval), 0, new_tat - now, 0, new_tat
  end
  return 0, idiv(max(p.tolerance - (base - now), 0), p.interval), allow_at - now, base - now, 0, nil
end

local function gcra_store(key, tat, ttl)
  redis.call('SET', key, tat, 'PX', ttl)
end

-- GCRA: algo.GCRA. State: one string, the theoretical arrival time (TAT);
-- an absent key is a TAT of 0.

local function gcra(key, b, cost, now, write)
  local interval, tolerance = P[b + 3], P[b + 4]
  local tat = tonumber(redis.call('GET', key)) or 0
  local base = now
  if tat ~= 0 then -- zero is an empty key, also before 1970
    base = max(tat, now)
  end
  local new_tat = base + cost * interval
  local allow_at = new_tat - tolerance
  if allow_at <= now then
    local reset = new_tat - now
    if write then
      redis.call('SET', key, int(new_tat), 'PX', ttl(reset))
    end
    return 1, idiv(max(tolerance - (new_tat - now), 0), interval), 0, reset, 0
  end
  return 0, idiv(max(tolerance - (base - now), 0), interval), allow_at - now, base - now, 0
end

-- GCRA: algo.GCRA. State: one string, the theoretical arrival time (TAT)
-- and the interval it was written with, "TAT INTERVAL"; an earlier version
-- wrote the TAT alone, read with the current interval. An absent key is a
-- TAT of 0.

local sfind, ssub = string.find, string.sub

local function gcra(key, b, cost, now, write)
  local interval, tolerance = P[b + 3], P[b + 4]
  local v = redis.call('GET', key)
  local tat, from = 0, 0
  if v then
    local sp = sfind(v, ' ', 1, true)
    if sp then
      tat, from = tonumber(ssub(v, 1, sp - 1)) or 0, tonumber(ssub(v, sp + 1)) or 0
    else
      tat = tonumber(v) or 0
    end
  end
  local base = now
  if tat ~= 0 then -- zero is an empty key, also before 1970
    base = now + rescale(max(tat - now, 0), from, interval)
  end
  local new_tat = base + cost * interval
  local allow_at = new_tat - tolerance
  if allow_at <= now then
    local reset = new_tat - now
    if write then
      redis.call('SET', key, sformat('%d %d', new_tat, interval), 'PX', ttl(reset))
    end
    return 1, idiv(max(tolerance - (new_tat - now), 0), interval), 0, reset, 0
  end
  return 0, idiv(max(tolerance - (base - now), 0), interval), allow_at - now, base - now, 0
end

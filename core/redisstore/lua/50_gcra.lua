-- GCRA: algo.GCRA. State: one string, the theoretical arrival time (TAT)
-- and the interval it was written with, "TAT INTERVAL"; an earlier version
-- wrote the TAT alone, read with the current interval. An absent key is a
-- TAT of 0.

local function load_gcra()
  local sfind, ssub = string.find, string.sub

  -- gcra_read returns the key's TAT and the interval it was written with (0
  -- when unknown).
  local function gcra_read(key)
    local v = redis.call('GET', key)
    if not v then return 0, 0 end
    local sp = sfind(v, ' ', 1, true)
    if sp then
      return tonumber(ssub(v, 1, sp - 1)) or 0, tonumber(ssub(v, sp + 1)) or 0
    end
    return tonumber(v) or 0, 0
  end

  local function gcra(key, b, cost, now, write)
    local interval, tolerance = P[b + 3], P[b + 4]
    local tat, from = gcra_read(key)
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

  -- gcra_adjust is GCRAState.Adjust: the arrival time moves by units
  -- intervals, never before now.
  local function gcra_adjust(key, b, units, at, now)
    local interval = P[b + 3]
    local tat, from = gcra_read(key)
    local backlog = 0
    if tat ~= 0 then backlog = rescale(max(tat - now, 0), from, interval) end
    backlog = add_backlog(backlog, units, interval)
    if backlog == 0 then
      redis.call('DEL', key)
      return
    end
    redis.call('SET', key, sformat('%d %d', now + backlog, interval), 'PX', ttl(backlog))
  end

  return gcra, gcra_adjust
end

-- Helpers shared by every algorithm. This file and the algorithm files are
-- concatenated, in name order, into the one script the store runs.
--
-- Every quantity is an integer below 2^53, which a Lua number (a double)
-- holds exactly, so sums, differences and comparisons are exact. No number
-- is ever turned into text by Lua (tostring and .. print %.14g); numbers
-- travel to Redis as command arguments, which Redis formats as integers.

-- idiv is Go's integer division for b > 0: the quotient truncated towards
-- zero, exact even where a / b rounds up to the next integer.
local function idiv(a, b)
  local neg = a < 0
  if neg then a = -a end
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  if neg then return -q end
  return q
end

local function max(a, b)
  if a > b then return a end
  return b
end

-- reset_at is algo.resetAt: the time from now until a backlog of used
-- microseconds, counted from last, has drained.
local function reset_at(last, used, now)
  if used == 0 then return 0 end
  return last + used - now
end

-- num reads a stored number; an absent field or key reads as 0.
local function num(v)
  return tonumber(v) or 0
end

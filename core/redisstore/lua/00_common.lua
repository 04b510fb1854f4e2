-- Helpers shared by every algorithm. This file, the algorithm files and the
-- dispatcher are concatenated, in name order, into the one script the store
-- runs. The script runs whole on every call, so it creates few closures and
-- tables: state and parameters travel as plain numbers, and each algorithm
-- file defines its functions inside a loader that the dispatcher calls only
-- when a policy of the call uses that algorithm.
--
-- Every quantity is an integer below 2^53, which a Lua number (a double)
-- holds exactly, so sums, differences and comparisons are exact. No number
-- goes through tostring or .. (they print %.14g). A number written to Redis
-- is formatted with int (string.format's %d: every digit, and several times
-- cheaper than the %.17g Redis applies to a Lua number argument, which
-- measured 0.3 us per argument here); the text stored is the same either
-- way.
--
-- ARGV[1] is a margin in milliseconds added to every TTL, ARGV[2] the number
-- of checks the call carries and ARGV[3] the number of distinct policies
-- they use. Six arguments per policy follow, all computed in Go: algorithm
-- code, limit, window, interval, tolerance and max delay (the leaky bucket's
-- ceiling on Delay, 0 for none), or for a fixed window on the calendar
-- (code 7) its limit, the length and start of the window the checks fall
-- in and the length of the next one, and for a sliding window on the
-- calendar (code 8) the same and the previous window's length; b below is
-- the index in ARGV of a policy's first argument. Then each check has now
-- in microseconds, the cost (0 means peek, -1 that each key has its own, -2
-- a refund or charge), its number of keys and, per key, the number of its
-- policy, followed by the key's cost when the check's is -1, or by its
-- signed units (negative for a refund) and the refunded charge's instant
-- when it is -2 (see 90_check.lua).
-- Each algorithm function takes (key, b, cost, now, write), reads its state,
-- decides like its Go counterpart in core/algo, writes the new state only
-- when write is true and the check is admitted, and returns allowed (1 or
-- 0), remaining, retry after, reset after and delay.

local max = math.max
local floor = math.floor
local sformat = string.format

-- int is the decimal text of an integer-valued number, every digit.
local function int(x)
  return sformat('%d', x)
end
local margin = tonumber(ARGV[1])

-- P[k] is tonumber(ARGV[k]) for the policy arguments the algorithms read,
-- parsed once per call by the dispatcher: the checks of one call share their
-- policies, and reading ARGV[k] through tonumber in every check cost
-- 0.12-0.25 us a read here (scripts/lua-costs.sh), three reads a check.
local P = {}

-- reads returns the first and last of the five numbers after an algorithm
-- code (limit, window, interval, tolerance, max delay) that the algorithm
-- of that code reads: the dispatcher parses only those. (Arithmetic, not a
-- table: a table constructor here would allocate on every call.)
local function reads(code)
  if code == 1 or code == 2 or code == 3 then return 1, 2 end
  if code == 7 then return 1, 4 end
  if code == 8 then return 1, 5 end
  if code == 6 then return 3, 5 end
  return 3, 4
end

-- idiv is Go's integer division for b > 0: the quotient truncated towards
-- zero, exact even where a / b rounds up to the next integer.
local function idiv(a, b)
  local neg = a < 0
  if neg then a = -a end
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  if neg then return -q end
  return q
end

-- ttl is the PEXPIRE of a state that may be dropped reset microseconds from
-- now: milliseconds rounded up, at least 1, plus the margin, as text.
local function ttl(reset)
  return int(max(idiv(reset + 999, 1000), 1) + margin)
end

-- window_start is algo.windowStart: the start of the window of the given
-- length that holds now, exact for negative now too.
local function window_start(now, window)
  local m = now - idiv(now, window) * window
  if m < 0 then m = m + window end
  return now - m
end

-- rescale is algo.rescale: a backlog of from-interval units as the same
-- units, whole, at interval to, at most 10^15 microseconds. A from of 0 (a
-- state of an earlier version, which stored no interval) is to.
local function rescale(backlog, from, to)
  if from == to or from == 0 or backlog <= 0 then return backlog end
  return math.min(idiv(backlog + from - 1, from), idiv(1000000000000000, to)) * to
end

-- add_backlog is algo.addBacklog: backlog plus units intervals, within
-- [0, 10^15]. Beyond 2^53 the product is inexact, but it is then clamped.
local function add_backlog(backlog, units, interval)
  return math.min(max(backlog + units * interval, 0), 1000000000000000)
end

-- Admits one request through a rate gate (ratelimit/redis-gate.ts): a GCRA on the gate's arrival time, held
-- back by a pause, at the rate an adaptive gate has learnt (raised again after a quiet while).
--
-- KEYS[1] the arrival time (tat)
-- KEYS[2] the pause
-- KEYS[3] the learnt rate (hash)
-- ARGV[1] the ceiling's interval (ms)
-- ARGV[2] the window (ms)
-- ARGV[3] the reserve share
-- ARGV[4] '1' for an adaptive gate
-- ARGV[5] quiet ms before a raise
-- ARGV[6] raise share
-- ARGV[7] how long the learnt rate is kept (ms)
-- returns {ms to wait, 0}, or {0, the time admitted (ms)}

-- @include redis-clock

local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return {pause, 0} end
local now = now_ms()
local ceilIv = tonumber(ARGV[1])
local interval = ceilIv
local window = tonumber(ARGV[2])
if ARGV[4] == '1' then
  local st = redis.call('HMGET', KEYS[3], 'iv', 'tol', 'at', 'hint')
  if st[1] then
    interval = math.max(ceilIv, tonumber(st[1]))
    local tol = math.min(window, tonumber(st[2]))
    local floorIv = math.max(ceilIv, tonumber(st[4] or 0))
    if now - tonumber(st[3]) >= tonumber(ARGV[5]) and (interval > floorIv or tol < window) then
      local perMin = 60000 / interval + tonumber(ARGV[6]) * 60000 / ceilIv
      interval = math.max(floorIv, 60000 / perMin)
      tol = math.min(window, math.max(tol * 2, 1000))
      redis.call('HSET', KEYS[3], 'iv', interval, 'tol', tol, 'at', now)
      redis.call('PEXPIRE', KEYS[3], ARGV[7])
    end
    window = math.max(tol, interval)
  end
end
-- The reserve is a share of the burst: with no burst (evenly spaced) there is nothing to keep back, and a
-- reserve of a whole interval or more would never let the deferrable lane through.
local reserve = (window - interval) * tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
-- A burst that shrank (or a pause that ended early) leaves no debt beyond one window; stored, or a caller
-- would be told to wait one interval again and again.
if tat > now + window then
  tat = now + window
  redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(window + interval))
end
local nextTat = tat + interval
local allowAt = nextTat - window + reserve
if allowAt > now then return {math.ceil(allowAt - now), 0} end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(window + interval))
return {0, now}

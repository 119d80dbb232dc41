-- Admits one request through a rate gate (ratelimit/redis-gate.ts): a GCRA on the gate's arrival time, held
-- back by a pause, at the rate an adaptive gate has learnt (raised again after a quiet while). Urgent callers
-- that must wait set a mark; deferrable callers admit nothing while it is set, so the next slot goes to the
-- urgent caller however many deferrable callers ask (realtime may take the whole rate, backfill what is left).
--
-- KEYS[1] the arrival time (tat)
-- KEYS[2] the pause
-- KEYS[3] the learnt rate (hash)
-- KEYS[4] the urgent callers' waiting mark (absent in calls from before it existed)
-- ARGV[1] the ceiling's interval (ms)
-- ARGV[2] the window (ms)
-- ARGV[3] the reserve share
-- ARGV[4] '1' for an adaptive gate
-- ARGV[5] quiet ms before a raise
-- ARGV[6] raise share
-- ARGV[7] how long the learnt rate is kept (ms)
-- ARGV[8] '1' for a deferrable caller (yields to the mark), '0' or absent for an urgent one (sets it)
-- ARGV[9] how long past the caller's wait its mark lasts (ms): longer than the caller takes to ask again
-- returns {ms to wait, 0}, or {0, the time admitted (ms)}

-- @include redis-clock

local urgentMark = KEYS[4]
local deferrable = ARGV[8] == '1'
-- An urgent caller told to wait holds the deferrable lane back until it asks again.
local function waitFor(ms)
  if urgentMark and not deferrable then
    local ttl = math.ceil(math.min(ms, 1000) + tonumber(ARGV[9] or 100))
    if redis.call('PTTL', urgentMark) < ttl then redis.call('SET', urgentMark, '1', 'PX', ttl) end
  end
  return {ms, 0}
end

local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return waitFor(pause) end
if urgentMark and deferrable then
  local held = redis.call('PTTL', urgentMark)
  if held > 0 then return {held, 0} end
end
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
if allowAt > now then return waitFor(math.ceil(allowAt - now)) end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(window + interval))
return {0, now}

-- A 429: pauses the gate, and cuts an adaptive gate's rate once for every request admitted before the cut,
-- at most once every few seconds, taking away the burst.
--
-- KEYS[1] the arrival time (tat)
-- KEYS[2] the pause
-- KEYS[3] the learnt rate (hash)
-- ARGV[1] pause ms
-- ARGV[2] when the refused request was admitted (ms)
-- ARGV[3] the ceiling's interval (ms)
-- ARGV[4] the window (ms)
-- ARGV[5] cut factor
-- ARGV[6] floor share
-- ARGV[7] least burst (ms)
-- ARGV[8] how long the learnt rate is kept (ms)
-- ARGV[9] '1' to cut ('0' when headers stated the quota: the rate is known, the pause is enough)
-- ARGV[10] least ms between cuts
-- returns 'cut', or 'not_cut'

-- @include redis-clock

local now = now_ms()
local pauseMs = tonumber(ARGV[1])
if pauseMs > 0 and redis.call('PTTL', KEYS[2]) < pauseMs then
  redis.call('SET', KEYS[2], '1', 'PX', math.ceil(pauseMs))
end
if ARGV[9] ~= '1' then return 'not_cut' end
local st = redis.call('HMGET', KEYS[3], 'iv', 'tol', 'cut')
local ceilIv = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local lastCut = tonumber(st[3] or -1)
if tonumber(ARGV[2]) <= lastCut or (lastCut >= 0 and now - lastCut < tonumber(ARGV[10])) then return 'not_cut' end
local iv = math.max(ceilIv, tonumber(st[1] or ceilIv))
local tol = math.min(window, tonumber(st[2] or window))
local perMin = math.max(60000 / ceilIv * tonumber(ARGV[6]), 60000 / iv * tonumber(ARGV[5]))
iv = 60000 / perMin
-- No burst after a cut: a service with fixed windows refuses a burst on top of a steady rate near its limit.
tol = math.max(iv, math.min(tol, tonumber(ARGV[7])))
redis.call('HSET', KEYS[3], 'iv', iv, 'tol', tol, 'at', now, 'cut', now)
redis.call('PEXPIRE', KEYS[3], ARGV[8])
-- After the pause the first request goes at once and the rest at the new spacing: no burst into a window
-- that just refused one.
local tat = now + pauseMs + math.max(tol, iv) - iv
redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(pauseMs + math.max(tol, iv)))
return 'cut'

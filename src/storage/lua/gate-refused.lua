-- A 429: pauses the gate, and cuts an adaptive gate's rate (lib/learnt-rate.lua) once for every request admitted
-- before the cut, at most once every few seconds.
--
-- KEYS[1] the arrival time (tat)
-- KEYS[2] the pause
-- KEYS[3] the learnt rate (hash)
-- ARGV[1] pause ms
-- ARGV[2] when the refused request was admitted (ms)
-- ARGV[3] the ceiling's interval (ms)
-- ARGV[4] the learner's start rate (a second; lib/learnt-rate.lua)
-- ARGV[5] its cut factor
-- ARGV[6] its floor (a second)
-- ARGV[7] its limit margin
-- ARGV[8] how long the learnt rate is kept after its last use (ms)
-- ARGV[9] '1' to cut ('0' when headers stated the quota: the rate is known, the pause is enough)
-- ARGV[10] least ms between cuts
-- ARGV[11] its doubling time before the first 429 (ms)
-- ARGV[12] its recovery time after a cut (ms)
-- ARGV[13] its probe time (ms)
-- ARGV[14] its probe share
-- returns 'cut', or 'not_cut'

-- @include redis-clock
-- @include learnt-rate

local now = now_ms()
local pauseMs = tonumber(ARGV[1])
if pauseMs > 0 and redis.call('PTTL', KEYS[2]) < pauseMs then
  redis.call('SET', KEYS[2], '1', 'PX', math.ceil(pauseMs))
end
if ARGV[9] ~= '1' then return 'not_cut' end
local ceilIv = tonumber(ARGV[3])
local p = learnt_params(ceilIv, ARGV[4], ARGV[6], ARGV[11], ARGV[12], ARGV[5], ARGV[7], ARGV[13], ARGV[14])
local st = read_learnt(KEYS[3])
init_learnt(st, now, p)
local lastCut = st.cut or -1
if tonumber(ARGV[2]) <= lastCut or (lastCut >= 0 and now - lastCut < tonumber(ARGV[10])) then return 'not_cut' end
-- The rate the 429 came at, less a margin, is the key's limit as far as is known: the rate sent over the last
-- second, when below the rate allowed (a rising rate runs ahead of what the service counted). A quota stated
-- before no longer holds.
local floor = math.min(p.floor, p.ceil)
local came = learnt_rate(st, now, p)
local sent = sent_lately(st, now)
if sent and sent > 0 then came = math.min(came, sent) end
local wmax = math.max(floor, came * p.margin)
local iv = 1000 / math.max(floor, wmax * p.cut)
redis.call('HDEL', KEYS[3], 'ss', 'hint', 'hwin', 'hi')
redis.call('HSET', KEYS[3], 'iv', iv, 'tol', iv, 'at', now, 'cut', now, 'wmax', wmax, 'k0', now, 'r0', st.r0,
  'mr', st.mr or 0, 'mb', st.mb or now, 'mc', st.mc or 0)
redis.call('PEXPIRE', KEYS[3], ARGV[8])
-- After the pause the first request goes at once and the rest at the new spacing: no burst into a window
-- that just refused one.
local tat = now + pauseMs
redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(pauseMs + iv))
return 'cut'

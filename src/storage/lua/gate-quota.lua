-- Sets an adaptive gate's rate to a quota the service stated, paced evenly (no burst) a little under the
-- limit: requests leave the gate spaced exactly but reach the service with some jitter, and a fixed window
-- refuses the one that comes early.
--
-- KEYS[1] the learnt rate (hash)
-- ARGV[1] the limit
-- ARGV[2] reset (ms)
-- ARGV[3] the window (ms; 0: not stated)
-- ARGV[4] the ceiling's interval (ms)
-- ARGV[5] how long the learnt rate is kept (ms)
-- ARGV[6] margin
-- returns 'set'

-- @include redis-clock

local limit = tonumber(ARGV[1])
local resetMs = tonumber(ARGV[2])
local ceilIv = tonumber(ARGV[4])
local win = tonumber(ARGV[3])
if win <= 0 then
  -- Not stated: the longest reset seen is the least the window can be.
  local seen = tonumber(redis.call('HGET', KEYS[1], 'hwin') or 0)
  win = math.max(seen, math.ceil(resetMs / 1000) * 1000, 1000)
end
local iv = math.max(ceilIv, win / limit * (1 + tonumber(ARGV[6])))
local now = now_ms()
redis.call('HSET', KEYS[1], 'iv', iv, 'tol', iv, 'hint', iv, 'hwin', win, 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 'set'

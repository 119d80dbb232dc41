-- Which failure counter a client uses: its own while the table of counted clients has room or holds it
-- already, else the shared one. A client's entry lives a window past its latest presentation, so it outlives
-- the counter a failure in that window started.
--
-- KEYS[1] the table of counted clients (sorted set client -> when its entry ends, ms)
-- ARGV[1] the client (counting unit)
-- ARGV[2] the window (ms)
-- ARGV[3] how many clients the table holds at most
-- returns 'own', or 'shared' when the table is full

-- @include redis-clock

local ms = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local ends = ms + tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ends, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'own'
end
return 'shared'

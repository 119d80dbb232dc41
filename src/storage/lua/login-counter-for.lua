-- Whether a client (or an address block, one level wider) has a failure counter of its own at this level: the
-- level's table has room or holds it already. When it is full the caller tries the next, wider level. An
-- entry lives a window past its latest presentation, so it outlives the counter a failure in that window
-- started.
--
-- KEYS[1] the level's table (sorted set client or block -> when its entry ends, ms)
-- ARGV[1] the client (counting unit) or block
-- ARGV[2] the window (ms)
-- ARGV[3] how many entries the table holds at most
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

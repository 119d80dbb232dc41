-- Takes a set of locks all at once or none of them (record locks of one installation share its hash tag).
--
-- KEYS[1..n] the locks; with ARGV[3], KEYS[n+1] is the lock holders hash (lock-holder-beat.lua)
-- ARGV[1] the value the locks take: the holder's token, with ARGV[3] `<token>|<holder id>`
-- ARGV[2] how long they last (ms)
-- ARGV[3] the holder's id (absent in calls from before holders): a lock whose value names a holder that is no
--         longer alive counts as free, and this holder is alive for ARGV[4] ms from now
-- ARGV[4] how long the holder counts as alive from now (ms)
-- ARGV[5] how long the holders hash outlives its last beat (ms)
-- returns 'acquired', or 'busy' when any is held

-- @include redis-clock

local n = #KEYS
local holders = nil
local now = 0
if ARGV[3] then
  holders = KEYS[n]
  n = n - 1
  now = now_ms()
end
for i = 1, n do
  local value = redis.call('GET', KEYS[i])
  if value then
    -- A lock taken without a holder (before holders, or by a caller without one) lasts its lease.
    local holder = holders and string.match(value, '|([^|]+)$')
    if not holder then return 'busy' end
    if tonumber(redis.call('HGET', holders, holder) or '0') >= now then return 'busy' end
  end
end
if holders then
  redis.call('HSET', holders, ARGV[3], now + tonumber(ARGV[4]))
  redis.call('PEXPIRE', holders, ARGV[5])
end
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return 'acquired'

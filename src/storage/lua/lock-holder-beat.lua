-- A lock holder (one process) says it lives: its field in an installation's lock holders hash is the Redis time
-- until which its record locks count as held (record-locks.ts). A holder whose time has passed is dead: a
-- contender takes its locks without waiting for their leases.
--
-- KEYS[1] the lock holders hash (holder id -> alive until, ms)
-- ARGV[1] the holder's id
-- ARGV[2] how long it counts as alive from now (ms)
-- ARGV[3] how long the hash outlives the last beat (ms)
-- ARGV[4] how long a dead holder's field is kept (ms), dropped when the hash holds many
-- returns 'alive'

-- @include redis-clock

local now = now_ms()
redis.call('HSET', KEYS[1], ARGV[1], now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
-- Every process that ever held a lock here has a field: a busy hash drops its long-dead ones.
if redis.call('HLEN', KEYS[1]) > 32 then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now - tonumber(ARGV[4]) then redis.call('HDEL', KEYS[1], all[i]) end
  end
end
return 'alive'

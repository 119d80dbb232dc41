-- Extends a lock the caller holds.
--
-- KEYS[1] the lock
-- ARGV[1] the holder's token
-- ARGV[2] how long it lasts from now (ms)
-- returns 'renewed', or 'lost' when another holder has it or it expired

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'renewed'
end
return 'lost'

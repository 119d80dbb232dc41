-- Raises the deployment's schema version once an upgrade step ran, only while the caller holds the upgrade lock
-- (a process that stalled past its lease does not write over the one that took the lock then), never lowering it.
--
-- KEYS[1] the upgrade lock
-- KEYS[2] the schema version
-- ARGV[1] the holder's token
-- ARGV[2] the version the step brought the deployment to
-- returns 'raised', or 'lost' when the caller no longer holds the lock

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'lost'
end
local current = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if current < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 'raised'

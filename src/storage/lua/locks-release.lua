-- Releases locks the caller holds: a lock that expired and was taken by another holder stays. Used for record
-- locks, token refresh locks, report request locks and a run's report fill lock.
--
-- KEYS[1..n] the locks (one slot)
-- ARGV[1] the holder's token
-- returns how many were released

local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then
    redis.call('DEL', k)
    n = n + 1
  end
end
return n

-- Extends the leases of a set of locks the caller holds (record locks of one installation share its hash tag).
--
-- KEYS[1..n] the locks
-- ARGV[1] the holder's token
-- ARGV[2] how long they last from now (ms)
-- returns how many were still the caller's and renewed (fewer than n: a lease lapsed and another took it)

local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then
    redis.call('PEXPIRE', k, ARGV[2])
    n = n + 1
  end
end
return n

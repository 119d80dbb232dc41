-- Judges one presentation of the admin token (auth/login-throttle.ts): the count decides and changes in one
-- atomic step, so of any number of concurrent presentations at most the limit of wrong ones are answered as
-- wrong, and every one run after the limit is reached (right or wrong) is throttled. A right token adds
-- nothing to the count.
--
-- KEYS[1] the client's failure counter
-- ARGV[1] failures allowed per window
-- ARGV[2] the window (ms)
-- ARGV[3] '1' when the token is right
-- returns {'throttled', ms left in the window}, {'let-in', 0} or {'refused', 0}

local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return { 'throttled', ttl }
end
if ARGV[3] == '1' then return { 'let-in', 0 } end
count = redis.call('INCR', KEYS[1])
if count == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return { 'refused', 0 }

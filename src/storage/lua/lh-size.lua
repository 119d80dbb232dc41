-- How many fields a linear-hash map holds: those in buckets (the meta hash counts them) and in `<stem>:big`.
--
-- KEYS[1] the map's stem
-- ARGV none
-- returns the count

return (tonumber(redis.call('HGET', KEYS[1], 'n')) or 0) + redis.call('HLEN', KEYS[1] .. ':big')

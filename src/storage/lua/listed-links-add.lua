-- Files records under the slug the CRM holds for them, as a run listed them before its batch indexed them
-- (storage/slug-index.ts, `addListed`); only while the installation exists, like every index write.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] the listed links (hash stored slug -> space-joined record ids)
-- ARGV[1] how long the listed links are kept after this listing (ms)
-- ARGV[2..] stored slug / record id pairs
-- returns 'added', or 'gone' when the installation is gone

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
for i = 2, #ARGV - 1, 2 do
  local slug, id = ARGV[i], ARGV[i + 1]
  local v = redis.call('HGET', KEYS[2], slug)
  if not v then
    redis.call('HSET', KEYS[2], slug, id)
  elseif not string.find(' ' .. v .. ' ', ' ' .. id .. ' ', 1, true) then
    redis.call('HSET', KEYS[2], slug, v .. ' ' .. id)
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 'added'

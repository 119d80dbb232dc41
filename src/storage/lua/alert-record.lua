-- Keeps a report's latest alert: an older one arriving late (redelivery, out of order) does not replace it.
--
-- KEYS[1] the alerts (hash slug -> JSON {line, at, eventId})
-- ARGV[1] the slug
-- ARGV[2] the alert (JSON)
-- ARGV[3] when it fired (ISO, compared as text)
-- returns 'kept', or 'older' when a newer alert is stored

local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and type(decoded.at) == 'string' and decoded.at > ARGV[3] then
    return 'older'
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'kept'

-- The installations listed under one slug digest in a shard of the fan-out.
--
-- KEYS[1] the shard's stem (linear-hash)
-- ARGV[1] the slug digest
-- returns their numbers, space-joined, or nil when none

-- @include linear-hash

return lh_get(lh_open(KEYS[1]), ARGV[1])

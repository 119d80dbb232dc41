-- Lists an installation under slug digests in one shard of the deployment's fan-out (storage/slug-fanout.ts).
--
-- KEYS[1] the shard's stem (linear-hash)
-- ARGV[1] the installation's number
-- ARGV[2..] slug digests
-- returns 'added'

-- @include linear-hash
-- @include member-lists

local M = lh_open(KEYS[1])
for i = 2, #ARGV do list_add(M, ARGV[i], ARGV[1]) end
lh_close(M)
return 'added'

-- Takes an installation out of slug digests in one shard of the deployment's fan-out.
--
-- KEYS[1] the shard's stem (linear-hash)
-- ARGV[1] the installation's number
-- ARGV[2..] slug digests
-- returns 'removed'

-- @include linear-hash
-- @include member-lists

local M = lh_open(KEYS[1])
for i = 2, #ARGV do list_remove(M, ARGV[i], ARGV[1]) end
lh_close(M)
return 'removed'

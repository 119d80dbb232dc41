-- Takes records out of the slug index under slugs they left (named by link-apply.lua and link-forget.lua). A
-- record whose stored slug is that slug again (moved back meanwhile) stays listed. A record taken out while on
-- another slug is named with that slug: should it share the digest, the caller files it again (link-reindex.lua).
--
-- KEYS[1] record states (linear-hash stem)
-- KEYS[2] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[3] slug digests listing two records or more (set)
-- ARGV[1..] three per record: id, stored slug it left, that slug's digest
-- returns {'unindexed', id, stored slug, ...} for the records taken out while linked to another slug

-- @include linear-hash
-- @include member-lists
-- @include record-state
-- @include status-counts

local R, B = lh_open(KEYS[1]), lh_open(KEYS[2])
local reply = { 'unindexed' }
for i = 1, #ARGV, 3 do
  local state = lh_get(R, ARGV[i])
  local slug = state and slug_of(state) or ''
  if slug ~= ARGV[i + 1] then
    list_remove(B, ARGV[i + 2], ARGV[i])
    shared_note(B, KEYS[3], ARGV[i + 2])
    if slug ~= '' then
      reply[#reply + 1] = ARGV[i]
      reply[#reply + 1] = slug
    end
  end
end
lh_close(B)
return reply

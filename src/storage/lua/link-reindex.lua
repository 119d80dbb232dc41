-- Puts records under their slug in the slug index again (the start-up upgrade when digests changed form). A
-- record already there is left as it is; one whose stored slug is no longer the one given was moved by a write
-- meanwhile, which indexed it itself.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] record states (linear-hash stem)
-- KEYS[3] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[4] slug digests listing two records or more (set)
-- ARGV[1..] three per record: id, stored slug, its digest
-- returns 'gone' when the installation is gone, else 'indexed'

-- @include linear-hash
-- @include member-lists
-- @include record-state
-- @include status-counts

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local R, B = lh_open(KEYS[2]), lh_open(KEYS[3])
for i = 1, #ARGV, 3 do
  local state = lh_get(R, ARGV[i])
  if state and slug_of(state) == ARGV[i + 1] then
    list_add(B, ARGV[i + 2], ARGV[i])
    shared_note(B, KEYS[4], ARGV[i + 2])
  end
end
lh_close(B)
return 'indexed'

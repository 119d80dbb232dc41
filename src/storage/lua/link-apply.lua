-- Writes the state of many records of one installation, their places in its slug index and their review
-- items, all at once; nothing once the installation is removed. The slug index is keyed by the slug's digest,
-- which only TypeScript computes (storage/slug-digest.ts): a record is filed under its new slug here, and the
-- slug it left is named in the reply for link-unindex.lua to take it out of (until then it is listed under
-- both, which readers tell apart by the record's own slug, as they do for two slugs sharing a digest).
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] record states (linear-hash stem)
-- KEYS[3] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[4] review items (linear-hash stem)
-- KEYS[5] review candidates' details (hash)
-- KEYS[6] status counts (hash; lib/status-counts.lua); its `changed` is set to the Redis time (ms) when a
--   record's state changed, its `built` when the installation's first states are written (none to count)
-- KEYS[7] stem prefix of the per-status record maps (`<prefix>:<status code>`)
-- KEYS[8] slug digests listing two records or more (set)
-- ARGV[1..] six per record: id, packed state without its seq, stored slug, its digest, review item ('' deletes
--   it), its candidates' details (JSON object). The stored seq is kept.
-- returns {'gone'} when the installation is gone; else {'applied', id, stored slug left, ...} for each record
--   that left a slug

-- @include linear-hash
-- @include member-lists
-- @include record-state
-- @include review-items
-- @include status-counts
-- @include redis-clock

if redis.call('EXISTS', KEYS[1]) == 0 then return { 'gone' } end
local R, B, RV = lh_open(KEYS[2]), lh_open(KEYS[3]), lh_open(KEYS[4])
-- The first states of an installation: none was written uncounted, so no build is needed for it.
if R.n == 0 and R.k == 0 and redis.call('EXISTS', KEYS[2] .. ':big') == 0 then
  redis.call('HSETNX', KEYS[6], 'built', '1')
end
local C = sc_open(KEYS[7])
local changed = false
local reply = { 'applied' }
for i = 1, #ARGV, 6 do
  local id, rest, slug, digest, review, cands = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local old = lh_get(R, id)
  local before = old and slug_of(old) or ''
  if before ~= slug then
    if before ~= '' then
      reply[#reply + 1] = id
      reply[#reply + 1] = before
    end
    if slug ~= '' then
      list_add(B, digest, id)
      shared_note(B, KEYS[8], digest)
    end
  end
  local new = (old and seq_of(old) or '') .. '|' .. rest
  if not old or rest_of(old) ~= rest then changed = true end
  lh_set(R, id, new)
  sc_move(C, KEYS[6], id, old, new)
  review_set(RV, KEYS[5], id, review, cands)
end
lh_close(R)
lh_close(B)
lh_close(RV)
sc_close(C)
if changed then redis.call('HSET', KEYS[6], 'changed', now_ms()) end
return reply

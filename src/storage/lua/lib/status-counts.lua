-- Per-status counts and lists of one installation, kept by every script that changes a record's state, so the
-- admin page never scans the states (storage/status-counts.ts reads them). Each status has a linear-hash map
-- `<prefix>:<status code>` of record id -> '' (its size is the status's count; its buckets page the list), and
-- the counts hash holds `b:<integer part of score>` -> how many records with a status carry such a score.
-- A record is counted once it is in its status's map: a state written before the maps existed (an
-- installation written by an earlier version) is not, until the one-time build (status-counts-build.lua) adds
-- it; a script taking a state out subtracts only what was counted, so the build and the writes never count a
-- record twice. Needs linear-hash and record-state included before it.

local function status_code(v) return string.match(v, '^[^|]*|[^|]*|([^|]*)') or '' end
local function score_part(v) return string.match(v, '^[^|]*|[^|]*|[^|]*|([^|]*)') or '' end

local function sc_open(prefix)
  return { prefix = prefix, maps = {} }
end

local function sc_map(C, code)
  local M = C.maps[code]
  if not M then
    M = lh_open(C.prefix .. ':' .. code)
    C.maps[code] = M
  end
  return M
end

local function sc_bin(v)
  local n = tonumber(score_part(v))
  if not n or n ~= n then return nil end
  return 'b:' .. string.format('%d', math.floor(n))
end

local function sc_count_score(counts, v, by)
  local bin = sc_bin(v)
  if not bin then return end
  if redis.call('HINCRBY', counts, bin, by) <= 0 then redis.call('HDEL', counts, bin) end
end

-- Counts a state not counted yet (the build); true when it added it.
local function sc_add_uncounted(C, counts, id, v)
  local code = status_code(v)
  if code == '' then return false end
  local M = sc_map(C, code)
  if lh_get(M, id) then return false end
  lh_set(M, id, '')
  sc_count_score(counts, v, 1)
  return true
end

-- A record's state changes from `old` to `new` (either nil: written first, or deleted).
local function sc_move(C, counts, id, old, new)
  if old and new and status_code(old) == status_code(new) and status_code(new) ~= '' then
    if lh_get(sc_map(C, status_code(new)), id) then
      if sc_bin(old) ~= sc_bin(new) then
        sc_count_score(counts, old, -1)
        sc_count_score(counts, new, 1)
      end
      return
    end
  end
  if old then
    local code = status_code(old)
    if code ~= '' then
      local M = sc_map(C, code)
      if lh_get(M, id) then
        lh_del(M, id)
        sc_count_score(counts, old, -1)
      end
    end
  end
  if new then sc_add_uncounted(C, counts, id, new) end
end

local function sc_close(C)
  for _, M in pairs(C.maps) do lh_close(M) end
end

-- Keeps the set of slug digests listing two records or more (where records may share a report) in step with
-- a slug-index field just changed. Needs linear-hash included before it.
local function shared_note(B, shared, digest)
  local v = lh_get(B, digest)
  if v and string.find(v, ' ', 1, true) then
    redis.call('SADD', shared, digest)
  else
    redis.call('SREM', shared, digest)
  end
end

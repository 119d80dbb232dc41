-- A linear-hash field whose value is a space-joined list of members: record ids under a slug digest (the
-- installation's slug index), installation numbers under a slug digest (the deployment's fan-out). Needs
-- linear-hash included before it.

local function list_add(M, field, member)
  local v = lh_get(M, field)
  if not v then
    lh_set(M, field, member)
  elseif not string.find(' ' .. v .. ' ', ' ' .. member .. ' ', 1, true) then
    lh_set(M, field, v .. ' ' .. member)
  end
end

local function list_remove(M, field, member)
  local v = lh_get(M, field)
  if not v then return end
  local kept = {}
  for m in string.gmatch(v, '%S+') do
    if m ~= member then kept[#kept + 1] = m end
  end
  if #kept == 0 then lh_del(M, field) else lh_set(M, field, table.concat(kept, ' ')) end
end

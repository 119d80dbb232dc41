import type { EnsureFieldsResult } from '../../../src/crm/connector.js';
import type { HubSpotHttp } from '../api/api-client.js';
import {
  createPropertyGroupRequest,
  createPropertyRequest,
  readPropertyRequest,
  updatePropertyRequest,
} from '../api/endpoints.js';
import { type HubSpotProperty, parseHubSpotError, propertySchema } from '../api/wire.js';
import {
  type HubSpotPropertyDefinition,
  type HubSpotPropertyOption,
  hubspotPropertyDefinitions,
  hubspotPropertyGroup,
} from './field-types.js';

/**
 * Creates the property group and every property of the FIELDS table, idempotently. A 409 means the property
 * exists (someone created it, or an earlier run did): it is read and its type reconciled to the table's, and
 * an enumeration gets any missing option added (options are only added, never removed).
 */
export async function ensureHubSpotFields(http: HubSpotHttp): Promise<EnsureFieldsResult> {
  const result: EnsureFieldsResult = { created: [], existing: [], reconciled: [], problems: [] };

  await http.request(createPropertyGroupRequest(http.paths, hubspotPropertyGroup()));

  for (const definition of hubspotPropertyDefinitions()) {
    const created = await http.request(createPropertyRequest(http.paths, definition));
    if (created.status !== 409) {
      result.created.push(definition.name);
      continue;
    }
    await reconcile(http, definition, result);
  }
  return result;
}

async function reconcile(
  http: HubSpotHttp,
  definition: HubSpotPropertyDefinition,
  result: EnsureFieldsResult,
): Promise<void> {
  const read = await http.request(readPropertyRequest(http.paths, definition.name));
  const parsed = propertySchema.safeParse(read.body);
  if (!parsed.success) {
    result.problems.push(
      `${definition.name}: HubSpot's description of the existing property could not be read`,
    );
    return;
  }
  const patch = differences(definition, parsed.data);
  if (!patch) {
    result.existing.push(definition.name);
    return;
  }

  result.reconciled.push(definition.name);
  const updated = await http.request(updatePropertyRequest(http.paths, definition.name, patch));
  if (updated.status >= 300) {
    const error = parseHubSpotError(updated.body);
    result.problems.push(
      `${definition.name}: is ${parsed.data.type}/${parsed.data.fieldType}, needs ${definition.type}/${definition.fieldType}; ` +
        `HubSpot refused the change (${error.message ?? updated.status}). Change or delete the property in HubSpot.`,
    );
  }
}

/** The PATCH body that brings `existing` in line with `wanted`, or null when nothing differs. */
function differences(
  wanted: HubSpotPropertyDefinition,
  existing: HubSpotProperty,
): Record<string, unknown> | null {
  const patch: Record<string, unknown> = {};
  if (existing.type !== wanted.type || existing.fieldType !== wanted.fieldType) {
    patch.type = wanted.type;
    patch.fieldType = wanted.fieldType;
  }
  if (existing.groupName !== undefined && existing.groupName !== wanted.groupName)
    patch.groupName = wanted.groupName;
  if (wanted.options) {
    const have = new Set(existing.type === wanted.type ? existing.options.map((o) => o.value) : []);
    const missing = wanted.options.filter((o) => !have.has(o.value));
    if (missing.length > 0 || patch.type !== undefined) {
      const kept: HubSpotPropertyOption[] =
        existing.type === wanted.type
          ? existing.options.map((o, i) => ({
              label: o.label,
              value: o.value,
              displayOrder: o.displayOrder ?? i,
              hidden: o.hidden ?? false,
            }))
          : [];
      patch.options = [...kept, ...missing];
    }
  }
  return Object.keys(patch).length > 0 ? patch : null;
}

import type { RecordActivity } from '../../../src/crm/connector.js';
import type { HubSpotPropertyDefinition, HubSpotPropertyGroupDefinition } from '../fields/field-types.js';
import { HUBSPOT_SIZES, type HubSpotPaths } from '../provider.js';
import { noteBody } from '../records/note-body.js';
import type { HubSpotRequest } from './api-client.js';

/**
 * Every request the connector sends to HubSpot's CRM APIs, one builder per endpoint: method, path, query and
 * body are decided here and nowhere else, so checking the connector against HubSpot's published OpenAPI specs
 * means reading this file. The OAuth form bodies live beside them in oauth-tokens.ts (`tokenForm`).
 */

export interface BatchUpdateInput {
  id: string;
  properties: Record<string, string>;
}

export function listCompaniesRequest(
  paths: HubSpotPaths,
  properties: readonly string[],
  after: string | null,
): HubSpotRequest {
  const query: Record<string, string> = {
    limit: String(HUBSPOT_SIZES.pageSize),
    properties: properties.join(','),
    archived: 'false',
  };
  if (after) query.after = after;
  return { method: 'GET', path: paths.companies, query };
}

/** The spec marks `propertiesWithHistory` required: sent empty, no history is wanted. */
export function batchReadRequest(
  paths: HubSpotPaths,
  properties: readonly string[],
  ids: readonly string[],
): HubSpotRequest {
  return {
    method: 'POST',
    path: paths.companiesBatchRead,
    query: { archived: 'false' },
    body: { properties: [...properties], propertiesWithHistory: [], inputs: ids.map((id) => ({ id })) },
    // 207: some ids are gone; 404: all of them are.
    accept: [207, 404],
  };
}

export function batchUpdateRequest(paths: HubSpotPaths, inputs: readonly BatchUpdateInput[]): HubSpotRequest {
  return {
    method: 'POST',
    path: paths.companiesBatchUpdate,
    body: { inputs: inputs.map((i) => ({ id: i.id, properties: i.properties })) },
    accept: [207, 400, 404],
  };
}

interface SearchFilter {
  propertyName: string;
  operator: 'EQ' | 'CONTAINS_TOKEN';
  value: string;
}

/** One page of the companies search, the filters ANDed in one group. */
function companiesSearchRequest(
  paths: HubSpotPaths,
  filters: SearchFilter[],
  properties: readonly string[],
  limit: number,
  after?: string,
): HubSpotRequest {
  return {
    method: 'POST',
    path: paths.companiesSearch,
    search: true,
    body: {
      filterGroups: [{ filters }],
      properties: [...properties],
      // Required by the 2026-03 spec; the record id keeps the pages stable while records change.
      sorts: ['hs_object_id'],
      limit,
      ...(after ? { after } : {}),
    },
  };
}

export function searchBySlugRequest(
  paths: HubSpotPaths,
  slugProperty: string,
  slug: string,
  properties: readonly string[],
  after: string | undefined,
): HubSpotRequest {
  const filters: SearchFilter[] = [{ propertyName: slugProperty, operator: 'EQ', value: slug }];
  return companiesSearchRequest(paths, filters, properties, HUBSPOT_SIZES.searchPageSize, after);
}

/**
 * Companies whose name holds every word of `query` inside one of its tokens: CONTAINS_TOKEN with `*` wildcards on
 * both sides, one filter per word (AND within the group; HubSpot allows six filters a group). Words are split where HubSpot
 * splits tokens (spaces and punctuation), so a `*` typed by the admin is dropped and cannot widen the search.
 */
export function nameSearchWords(query: string): string[] {
  return query
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '')
    .slice(0, 6);
}

export function searchByNameRequest(
  paths: HubSpotPaths,
  words: readonly string[],
  properties: readonly string[],
  limit: number,
): HubSpotRequest {
  const filters = words.map(
    (w): SearchFilter => ({ propertyName: 'name', operator: 'CONTAINS_TOKEN', value: `*${w}*` }),
  );
  return companiesSearchRequest(paths, filters, properties, Math.min(limit, HUBSPOT_SIZES.searchPageSize));
}

/** 409: the group exists already, which is all that matters (its label is the admin's to change). */
export function createPropertyGroupRequest(
  paths: HubSpotPaths,
  group: HubSpotPropertyGroupDefinition,
): HubSpotRequest {
  return { method: 'POST', path: paths.companyPropertyGroups, body: group, accept: [409] };
}

export function createPropertyRequest(
  paths: HubSpotPaths,
  definition: HubSpotPropertyDefinition,
): HubSpotRequest {
  return { method: 'POST', path: paths.companyProperties, body: definition, accept: [409] };
}

export function readPropertyRequest(paths: HubSpotPaths, name: string): HubSpotRequest {
  return { method: 'GET', path: `${paths.companyProperties}/${encodeURIComponent(name)}` };
}

export function updatePropertyRequest(
  paths: HubSpotPaths,
  name: string,
  patch: Record<string, unknown>,
): HubSpotRequest {
  return {
    method: 'PATCH',
    path: `${paths.companyProperties}/${encodeURIComponent(name)}`,
    body: patch,
    accept: [400, 409],
  };
}

export function accountDetailsRequest(paths: HubSpotPaths): HubSpotRequest {
  return { method: 'GET', path: paths.accountDetails };
}

/** The portal's note -> company association types (labels API, v4). */
export function noteCompanyLabelsRequest(paths: HubSpotPaths): HubSpotRequest {
  return { method: 'GET', path: paths.noteCompanyLabels };
}

/** A note associated with one company (alert activities; needs the optional note scope); its body is HTML. */
export function createNoteRequest(
  paths: HubSpotPaths,
  companyId: string,
  activity: RecordActivity,
  associationTypeId: number,
): HubSpotRequest {
  return {
    method: 'POST',
    path: paths.notes,
    body: {
      properties: { hs_timestamp: activity.at, hs_note_body: noteBody(activity) },
      associations: [
        {
          to: { id: companyId },
          types: [
            {
              associationCategory: 'HUBSPOT_DEFINED',
              associationTypeId,
            },
          ],
        },
      ],
    },
  };
}

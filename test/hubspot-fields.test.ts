import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { createHubSpotConnector, staticAccessToken } from '../connectors/hubspot/create-connector.js';
import { HUBSPOT_FIELDS, hubspotField } from '../connectors/hubspot/fields/field-names.js';
import {
  fromHubSpotValue,
  HUBSPOT_TYPE_BY_KIND,
  toHubSpotValue,
} from '../connectors/hubspot/fields/field-types.js';
import { HUBSPOT_DEFAULT_API_VERSION, hubspotPaths } from '../connectors/hubspot/provider.js';
import { MATCH_STATUSES } from '../src/fields.js';
import { requireEveryMock } from './support/strict-nock.js';

/** The date-versioned paths the connector calls by default. */
const P = hubspotPaths(HUBSPOT_DEFAULT_API_VERSION);

const API = 'https://api.hubspot.test';
const connector = () =>
  createHubSpotConnector({ apiUrl: API, tokens: staticAccessToken('t'), sleep: async () => {} });
const exists = (name: string) => ({
  status: 'error',
  message: `Property named '${name}' already exists.`,
  category: 'OBJECT_ALREADY_EXISTS',
});

requireEveryMock('mocked HubSpot');

describe('ensureFields', () => {
  it('creates the group and every property of the FIELDS table with the types of the mapping table', async () => {
    const created: Record<string, unknown>[] = [];
    let group: unknown;
    nock(API)
      .post(P.companyPropertyGroups, (body) => {
        group = body;
        return true;
      })
      .reply(201, { name: 'report_scores', label: 'Report scores' })
      .post(P.companyProperties, (body) => {
        created.push(body);
        return true;
      })
      .times(HUBSPOT_FIELDS.length)
      .reply(201, {});
    const result = await connector().ensureFields();
    expect(group).toMatchObject({ name: 'report_scores', label: 'Report scores' });
    expect(result).toEqual({
      created: HUBSPOT_FIELDS.map((f) => f.hubspot),
      existing: [],
      reconciled: [],
      problems: [],
    });
    for (const field of HUBSPOT_FIELDS) {
      const body = created.find((c) => c.name === field.hubspot);
      expect(body, field.hubspot).toMatchObject({
        ...HUBSPOT_TYPE_BY_KIND[field.kind],
        groupName: 'report_scores',
      });
    }
    const status = created.find((c) => c.name === 'report_match_status') as { options: { value: string }[] };
    expect(status.options.map((o) => o.value)).toEqual([...MATCH_STATUSES]);
  });

  it('on 409 reads the existing property and reconciles its type and options', async () => {
    const patches: Record<string, unknown> = {};
    const existing: Record<string, Record<string, unknown>> = {
      report_score: {
        name: 'report_score',
        type: 'string',
        fieldType: 'text',
        groupName: 'report_scores',
        options: [],
      },
      report_band: {
        name: 'report_band',
        type: 'string',
        fieldType: 'text',
        groupName: 'report_scores',
        options: [],
      },
      report_match_status: {
        name: 'report_match_status',
        type: 'enumeration',
        fieldType: 'select',
        groupName: 'report_scores',
        options: [
          { label: 'Matched', value: 'matched', displayOrder: 0, hidden: false },
          { label: 'Legacy', value: 'legacy', displayOrder: 1, hidden: false },
        ],
      },
      report_verified_at: {
        name: 'report_verified_at',
        type: 'string',
        fieldType: 'text',
        groupName: 'report_scores',
        options: [],
      },
    };
    nock(API)
      .post(P.companyPropertyGroups)
      .reply(409, { status: 'error', category: 'OBJECT_ALREADY_EXISTS', message: 'exists' })
      .post(P.companyProperties)
      .times(HUBSPOT_FIELDS.length)
      .reply(async (req: Request) => {
        const { name } = (await req.json()) as { name: string };
        return name in existing ? [409, exists(name)] : [201, {}];
      })
      .get(new RegExp(`^${P.companyProperties}/report_(score|band|match_status|verified_at)$`))
      .times(4)
      .reply(async (req: Request) => [200, existing[new URL(req.url).pathname.split('/').at(-1)!]])
      .patch(new RegExp(`^${P.companyProperties}/report_(score|match_status|verified_at)$`))
      .times(3)
      .reply(async (req: Request) => {
        const name = new URL(req.url).pathname.split('/').at(-1)!;
        patches[name] = await req.json();
        // A string property holding text cannot become a datetime: HubSpot refuses.
        return name === 'report_verified_at'
          ? [
              400,
              { status: 'error', category: 'VALIDATION_ERROR', message: 'cannot convert existing values' },
            ]
          : [200, {}];
      });

    const result = await connector().ensureFields();
    expect(result.existing).toEqual(['report_band']);
    expect(result.reconciled.sort()).toEqual(['report_match_status', 'report_score', 'report_verified_at']);
    expect(result.created).toHaveLength(HUBSPOT_FIELDS.length - 4);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toContain('report_verified_at');
    expect(result.problems[0]).toContain('cannot convert existing values');
    expect(patches.report_score).toEqual({ type: 'number', fieldType: 'number' });
    // Options are added, never removed: the person's "legacy" option stays.
    const options = (patches.report_match_status as { options: { value: string }[] }).options.map(
      (o) => o.value,
    );
    expect(options).toEqual([
      'matched',
      'legacy',
      'needs_review',
      'no_match',
      'not_published',
      'requested',
      'error',
    ]);
  });
});

describe('value conversion', () => {
  const f = hubspotField;
  it('puts values on the wire as HubSpot expects them', () => {
    expect(toHubSpotValue(f('score'), 81.5)).toBe('81.5');
    expect(toHubSpotValue(f('score'), 1e21)).toBe('1000000000000000000000');
    expect(toHubSpotValue(f('score'), 0.0000001)).toBe('0.0000001');
    expect(toHubSpotValue(f('score'), null)).toBe('');
    expect(toHubSpotValue(f('scoredAt'), '2026-03-01T10:00:00+01:00')).toBe(String(Date.UTC(2026, 2, 1, 9)));
    expect(toHubSpotValue(f('slug'), 'acme')).toBe('acme');
    expect(() => toHubSpotValue(f('score'), 'eighty')).toThrow(/report_score needs a number/);
    expect(() => toHubSpotValue(f('verifiedAt'), 'yesterday')).toThrow(
      /report_verified_at needs a timestamp/,
    );
  });

  it('reads HubSpot strings back as connector values', () => {
    expect(fromHubSpotValue(f('score'), '81.50')).toBe(81.5);
    expect(fromHubSpotValue(f('score'), '')).toBeNull();
    expect(fromHubSpotValue(f('score'), undefined)).toBeNull();
    expect(fromHubSpotValue(f('scoredAt'), '1772359200000')).toBe('2026-03-01T10:00:00.000Z');
    expect(fromHubSpotValue(f('scoredAt'), '2026-03-01T10:00:00Z')).toBe('2026-03-01T10:00:00.000Z');
    expect(fromHubSpotValue(f('scoredAt'), 'garbage')).toBeNull();
    expect(fromHubSpotValue(f('matchStatus'), 'matched')).toBe('matched');
  });
});

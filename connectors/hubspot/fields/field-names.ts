import { FIELDS, type FieldDefinition, type FieldKey } from '../../../src/fields.js';

/** The HubSpot company property of each field of the FIELDS table (CONTRACT.md, "Fields written on the CRM record"). */
export const HUBSPOT_PROPERTY_NAMES: Readonly<Record<FieldKey, string>> = {
  slug: 'report_slug',
  score: 'report_score',
  band: 'report_band',
  scoredAt: 'report_scored_at',
  pillars: 'report_pillars',
  verifiedScore: 'report_verified_score',
  verdict: 'report_verdict',
  verifiedAt: 'report_verified_at',
  reportUrl: 'report_url',
  matchStatus: 'report_match_status',
  syncedAt: 'report_synced_at',
  alert: 'report_alert',
  alertAt: 'report_alert_at',
  linkSource: 'report_link_source',
  scorePrevious: 'report_score_previous',
};

/** The property group the connector's properties live in. */
export const HUBSPOT_PROPERTY_GROUP = { name: 'report_scores', label: 'Report scores' } as const;

/** A field of the FIELDS table with its HubSpot property name. */
export interface HubSpotField extends FieldDefinition {
  hubspot: string;
}

/** The FIELDS table as HubSpot names it, in FIELDS order. */
export const HUBSPOT_FIELDS: readonly HubSpotField[] = FIELDS.map((f) => ({
  ...f,
  hubspot: HUBSPOT_PROPERTY_NAMES[f.key],
}));

export function hubspotField(key: FieldKey): HubSpotField {
  const field = HUBSPOT_FIELDS.find((f) => f.key === key);
  if (!field) throw new Error(`unknown field key ${key}`);
  return field;
}

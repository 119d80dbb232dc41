import type { AppContext } from '../app/context.js';
import type { CompanyRecord } from '../crm/connector.js';
import type { Decision } from '../decisions/decision-log.js';
import type { FieldKey, MatchStatus } from '../fields.js';
import { isLetIn } from '../installations/let-in.js';
import type { ReportRequest } from '../requests/request-store.js';
import type { ReviewItem } from '../storage/review-codec.js';
import { AdminRequestError } from './errors.js';
import { recordIdSchema } from './schemas.js';

/**
 * One record as the CRM holds it beside what the connector keeps about it: the admin record page, its JSON
 * route and `report-connector record` show this. Reading it writes nothing anywhere; a never-approved
 * installation's CRM is not called.
 */
export interface RecordView {
  installationId: string;
  recordId: string;
  crm:
    | {
        read: true;
        found: true;
        name: string | null;
        domain: string | null;
        fields: Partial<Record<FieldKey, unknown>>;
      }
    | { read: true; found: false }
    | { read: false; reason: string };
  connector: {
    status: MatchStatus | null;
    slug: string | null;
    /** The slug when the link is the connector's own (it may take it back on a re-match). */
    autoLinkedSlug: string | null;
    review: ReviewItem | null;
    rejectedSlugs: string[];
    request: ReportRequest | null;
    /** This record's decisions, newest first (at most DECISIONS_SHOWN). */
    decisions: Decision[];
  };
}

const DECISIONS_SHOWN = 20;

/** Null when the installation does not exist, or when neither the CRM nor the connector knows the record. */
export async function readRecordView(
  ctx: AppContext,
  installationId: string,
  recordId: string,
): Promise<RecordView | null> {
  const installation = await ctx.installations.get(installationId);
  if (!installation) return null;
  const [status, [slug], autoLinkedSlug, review, rejected, request, decisions] = await Promise.all([
    ctx.index.statusOf(installationId, recordId),
    ctx.index.slugsOf(installationId, [recordId]),
    ctx.index.autoLinkOf(installationId, recordId),
    ctx.index.reviews.item(installationId, recordId),
    ctx.index.reviews.rejectedSlugs(installationId, recordId),
    ctx.requests.get(installationId, recordId),
    ctx.decisions.all(installationId),
  ]);
  let crm: RecordView['crm'];
  if (!isLetIn(installation)) {
    crm = { read: false, reason: 'the installation waits for approval: its CRM is not called' };
  } else {
    try {
      const [record] = await ctx.runtime.connectorFor(installation).readCompanies([recordId]);
      crm = record ? found(record) : { read: true, found: false };
    } catch (err) {
      crm = { read: false, reason: err instanceof Error ? err.message : String(err) };
    }
  }
  const known = status !== null || (slug ?? null) !== null || review !== null || request !== null;
  if (!known && !(crm.read && crm.found)) return null;
  return {
    installationId,
    recordId,
    crm,
    connector: {
      status,
      slug: slug ?? null,
      autoLinkedSlug,
      review,
      rejectedSlugs: [...rejected],
      request,
      decisions: decisions
        .filter((d) => d.recordId === recordId)
        .slice(-DECISIONS_SHOWN)
        .reverse(),
    },
  };
}

function found(record: CompanyRecord): RecordView['crm'] {
  return { read: true, found: true, name: record.name, domain: record.domain, fields: record.fields };
}

/** The record's view for the admin routes: 404 for an unknown installation, a malformed id or an unknown record. */
export async function recordViewOr404(
  ctx: AppContext,
  installationId: string,
  rawRecordId: unknown,
): Promise<RecordView> {
  const recordId = recordIdSchema.safeParse(rawRecordId);
  const view = recordId.success ? await readRecordView(ctx, installationId, recordId.data) : null;
  if (!view) {
    throw new AdminRequestError(
      404,
      'RECORD_NOT_FOUND',
      `Installation ${installationId} has no record ${String(rawRecordId)} (neither the CRM nor the connector knows it).`,
    );
  }
  return view;
}

import { readRecordView } from '../../admin/record-view.js';
import { FIELDS } from '../../fields.js';
import { parseCommandArgs } from '../args.js';
import { CommandFailedError, UsageError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';
import { unreadableSecrets } from './secrets-check.js';

/**
 * `record --installation ID --record RECORD_ID [--json]`: one record as the CRM holds it beside the connector's
 * state (what the admin record page shows). Reads only: Redis and ENCRYPTION_KEY suffice.
 */
export async function recordCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('record', argv, {
    installation: { type: 'string' },
    record: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (!values.installation || !values.record)
    throw new UsageError('record needs --installation ID and --record RECORD_ID');
  const ctx = await openContext(io, { mode: 'read-only' });
  try {
    const installation = await ctx.installations.get(values.installation);
    if (!installation)
      throw new CommandFailedError(
        `There is no installation ${values.installation}: report-connector status lists them.`,
      );
    const unreadable = await unreadableSecrets(ctx, installation);
    if (unreadable) throw new CommandFailedError(unreadable);
    const view = await readRecordView(ctx, values.installation, values.record);
    if (!view)
      throw new CommandFailedError(
        `Installation ${values.installation} has no record ${values.record} (neither the CRM nor the connector knows it).`,
      );
    if (values.json) {
      io.out(JSON.stringify(view, null, 2));
      return 0;
    }
    const show = (v: unknown) =>
      v === null || v === undefined || v === '' ? '-' : typeof v === 'string' ? v : JSON.stringify(v);
    const lines = [`${view.installationId} record ${view.recordId}`, 'In the CRM:'];
    const crm = view.crm;
    if (!crm.read) lines.push(`  not read: ${crm.reason}`);
    else if (!crm.found) lines.push('  no such record (deleted or merged away)');
    else {
      lines.push(`  name: ${show(crm.name)}`, `  domain: ${show(crm.domain)}`);
      for (const f of FIELDS) lines.push(`  ${f.key}: ${show(crm.fields[f.key])}`);
    }
    const c = view.connector;
    lines.push(
      'In the connector:',
      `  status: ${show(c.status)}`,
      `  report: ${show(c.slug)}${c.autoLinkedSlug ? ' (linked by the connector)' : ''}`,
      `  review candidates: ${c.review?.candidates.map((k) => k.slug).join(', ') || '-'}`,
      `  rejected: ${c.rejectedSlugs.join(', ') || '-'}`,
      `  report request: ${c.request ? `${c.request.state} (${c.request.submissionId})` : '-'}`,
      `  decisions: ${c.decisions.length}`,
      ...c.decisions.map((d) => `    ${d.at} ${d.action}${d.slug ? ` ${d.slug}` : ''} by ${d.by.kind}`),
    );
    io.out(lines.join('\n'));
    return 0;
  } finally {
    await ctx.close();
  }
}

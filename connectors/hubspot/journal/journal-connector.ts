import type { ChangedRecord, CrmChange, PolledCrmConnector } from '../../../src/crm/connector.js';
import type { HubSpotHttp } from '../api/api-client.js';
import { HubSpotConnector } from '../connector.js';
import type { HubSpotJournal } from './journal.js';
import { journalFindings } from './journal-entries.js';

/**
 * A portal's connector that also recovers missed webhooks from HubSpot's webhooks journal: the change poll
 * (the pipeline's `poll` job, every HUBSPOT_JOURNAL_MINUTES) reads the journal past the saved offset. The
 * first poll subscribes the portal and starts at the journal's newest entry. The cursor is the journal offset,
 * or FROM_EARLIEST while the journal held nothing (the saved cursor must be non-empty to count as saved).
 */
const FROM_EARLIEST = 'earliest';

export class JournalHubSpotConnector extends HubSpotConnector implements PolledCrmConnector {
  constructor(
    http: HubSpotHttp,
    private readonly journal: HubSpotJournal,
    private readonly portalId: string,
  ) {
    super(http);
  }

  async listChangedSince(
    cursor: string | null,
  ): Promise<{ records: ChangedRecord[]; cursor: string; changes?: CrmChange[] }> {
    if (cursor === null) {
      await this.journal.subscribe();
      return { records: [], cursor: (await this.journal.latestOffset()) ?? FROM_EARLIEST };
    }
    const pass = await this.journal.readAfter(cursor === FROM_EARLIEST || cursor === '' ? null : cursor);
    const { changes, reread } = journalFindings(pass.entries, this.portalId);
    const explained = new Set(changes.map((c) => c.recordId));
    const ids = reread.filter((id) => !explained.has(id));
    // Re-read records carry no timestamps: a record the index has not seen is left to the backfill or the
    // daily reconcile, and one it has seen is compared with what it last saw.
    const records = ids.length > 0 ? await this.readCompanies(ids) : [];
    return {
      records: records.map((r) => ({ ...r, createdAt: '', modifiedAt: '' })),
      cursor: pass.offset ?? FROM_EARLIEST,
      changes,
    };
  }
}

import { randomUUID } from 'node:crypto';

/**
 * The local HubSpot's webhooks journal: what a portal's journal subscription keeps, for 3 days, in the
 * 2026-03 API's shapes. Each change is one entry; an entry's file holds the change as a webhook-shaped event
 * (HubSpot's spec does not show the file's content: see connectors/hubspot/journal/journal-entries.ts).
 */

interface JournalSubscription {
  actions: Set<string>;
  properties: Set<string>;
}

interface JournalEntry {
  offset: string;
  at: number;
  events: Record<string, unknown>[];
}

/** What each kind of company event is as a journal action. */
const ACTIONS: Record<string, string> = {
  creation: 'CREATE',
  propertyChange: 'UPDATE',
  deletion: 'DELETE',
  merge: 'MERGE',
  restore: 'RESTORE',
};

export const LOCAL_JOURNAL_RETENTION_MS = 3 * 24 * 3_600_000;

export class LocalJournal {
  private readonly subscriptions = new Map<string, JournalSubscription>();
  private entries: JournalEntry[] = [];

  constructor(private readonly now: () => number) {}

  subscribe(portalId: string, actions: readonly string[], properties: readonly string[]): void {
    this.subscriptions.set(portalId, { actions: new Set(actions), properties: new Set(properties) });
  }

  subscribed(portalId: string): boolean {
    return this.subscriptions.has(portalId);
  }

  /** Keeps `event` (`action` as in webhook subscription types) when the portal's subscription asks for it. */
  record(portalId: string, action: string, event: Record<string, unknown>): void {
    const subscription = this.subscriptions.get(portalId);
    const kind = ACTIONS[action];
    if (!subscription || !kind || !subscription.actions.has(kind)) return;
    if (kind === 'UPDATE' && !subscription.properties.has(String(event.propertyName))) return;
    this.entries.push({ offset: randomUUID(), at: this.now(), events: [event] });
  }

  private live(): JournalEntry[] {
    const from = this.now() - LOCAL_JOURNAL_RETENTION_MS;
    this.entries = this.entries.filter((e) => e.at >= from);
    return this.entries;
  }

  earliest(count: number): JournalEntry[] {
    return this.live().slice(0, count);
  }

  latest(count: number): JournalEntry[] {
    const live = this.live();
    return live.slice(Math.max(0, live.length - count));
  }

  /** The entries after `offset`, or null when it is unknown or expired (HubSpot answers 404). */
  after(offset: string, count: number): JournalEntry[] | null {
    const live = this.live();
    const i = live.findIndex((e) => e.offset === offset);
    return i < 0 ? null : live.slice(i + 1, i + 1 + count);
  }

  file(offset: string): Record<string, unknown>[] | null {
    return this.live().find((e) => e.offset === offset)?.events ?? null;
  }

  /** Entries kept, for tests. */
  size(): number {
    return this.live().length;
  }
}

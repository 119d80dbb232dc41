import { isLetIn } from '../installations/let-in.js';
import type { Installation } from '../installations/store.js';
import { providerFor } from '../providers.js';
import { type StreamStateReading, streamsNow } from '../storage/change-stream-states.js';
import type { AppContext } from './context.js';

/**
 * Where an installation's CRM changes come from now, and why, for the admin page, its JSON API and `status`.
 * The stream counts only while a worker holds its lease and the stream itself says it streams: the same rule
 * the poll skips its CRM calls by (ChangeStreamStates.healthy). Everything else is the poll, with the reason
 * an admin can act on. Whether the stream is switched on is read from this process's configuration: the
 * server and the workers share one environment.
 */

export const CHANGE_SOURCE_REASONS = [
  'webhooks',
  'polled',
  'streaming',
  'starting',
  'unavailable',
  'reconnecting',
  'switched-off',
  'not-connected',
  'first-poll',
  'no-holder',
] as const;
export type ChangeSourceReason = (typeof CHANGE_SOURCE_REASONS)[number];

export interface ChangeSourceView {
  /** How changes arrive now: pushed by the CRM, over the change stream the workers hold, or by the poll. */
  mode: 'webhooks' | 'stream' | 'poll';
  reason: ChangeSourceReason;
  /** The same in words an admin understands. */
  detail: string;
  /** Since when changes have come this way, as the stream recorded it (ISO); null when not known. */
  since: string | null;
  /** The stream's last word (ISO); null when it has said nothing. */
  updated: string | null;
  /** How often the poll runs (s); null when the CRM is not polled. */
  pollSeconds: number | null;
}

/** What the reading needs of the application context (the stream states, the poll cursors). */
export type ChangeSourceDeps = Pick<AppContext, 'config' | 'stores' | 'index'>;

export async function changeSourceOf(
  deps: ChangeSourceDeps,
  installation: Installation,
): Promise<ChangeSourceView> {
  const provider = providerFor(installation.crm);
  const everyMs = provider.pollIntervalMs(deps.config);
  const pollSeconds = everyMs === null ? null : Math.round(everyMs / 1000);
  const base = { since: null, updated: null, pollSeconds };
  if (provider.pushedChanges) {
    const net = everyMs === null ? '' : `; every ${interval(everyMs)} a poll recovers any that never arrived`;
    return {
      ...base,
      mode: 'webhooks',
      reason: 'webhooks',
      detail: `Changes arrive by ${provider.pushedChanges}, within seconds${net}.`,
    };
  }
  const byPoll = everyMs === null ? 'by the poll' : `by the poll, every ${interval(everyMs)}`;
  const stream = provider.changeStream;
  if (!stream) return { ...base, mode: 'poll', reason: 'polled', detail: `Changes arrive ${byPoll}.` };
  const [reading, cursor] = await Promise.all([
    deps.stores.streamStates.read(installation.id),
    deps.index.pollCursors.get(installation.id),
  ]);
  const poll = (reason: ChangeSourceReason, why: string): ChangeSourceView => ({
    ...base,
    ...recorded(reading, 'poll'),
    mode: 'poll',
    reason,
    detail: `${why.replace(/\.$/, '')}. Changes arrive ${byPoll}.`,
  });
  const { held, state } = reading;
  if (streamsNow(reading) && state) {
    return {
      ...base,
      ...recorded(reading, 'stream'),
      mode: 'stream',
      reason: 'streaming',
      detail: `${state.detail.replace(/\.$/, '')}, within seconds. The poll stands by: it calls the CRM when the stream asks, and once a day.`,
    };
  }
  if (held && state?.reason === 'unavailable') return poll('unavailable', state.detail);
  if (held && state?.reason === 'reconnecting') return poll('reconnecting', state.detail);
  if (held) return poll('starting', `A worker is starting the ${stream.label} stream`);
  if (!stream.enabled(deps.config)) {
    return poll('switched-off', `${stream.label} is switched off (${stream.variable} is not set to true)`);
  }
  if (!isLetIn(installation) || installation.status !== 'connected') {
    return poll(
      'not-connected',
      `No ${stream.label} stream while the installation is not connected and approved`,
    );
  }
  if (cursor === null) {
    return poll('first-poll', `Waiting for the first poll: the ${stream.label} stream starts after it`);
  }
  const last = state
    ? ` (last recorded ${minuteUtc(state.updated)}: ${state.detail.replace(/\.$/, '')})`
    : '';
  return poll(
    'no-holder',
    `No worker holds the ${stream.label} stream: no worker is running, or every worker is at its stream limit${last}`,
  );
}

/** `since` and `updated` as recorded, `since` only when the record is of the mode shown. */
function recorded(
  { state }: StreamStateReading,
  mode: 'stream' | 'poll',
): Pick<ChangeSourceView, 'since' | 'updated'> {
  if (!state) return { since: null, updated: null };
  return { since: state.mode === mode ? iso(state.since) : null, updated: iso(state.updated) };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** To the minute, in UTC, as the admin page and the logs write times. */
function minuteUtc(ms: number): string {
  return `${iso(ms).slice(0, 16).replace('T', ' ')} UTC`;
}

function interval(ms: number): string {
  const s = Math.round(ms / 1000);
  // In seconds, as poll intervals are set, up to ten minutes.
  if (s < 600) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} minutes` : `${Math.round(m / 60)} hours`;
}

import { z } from 'zod';

/**
 * `alert.fired` as the connector reads it. The payload is not published and is only a trigger, so nothing in
 * it is required: the readable line is built from whatever of kind, title, message and severity it carries
 * (at the top of `data` or inside `data.alert`), and falls back to the event type. Nothing here throws.
 */

export const ALERT_EVENT = 'alert.fired';
/** The shortest text field of the CRMs (255 characters) holds the line, so every CRM shows the same text. */
export const ALERT_LINE_MAX = 255;

export interface Alert {
  /** The report the alert is about; null when the payload names none (recorded, nothing to update). */
  slug: string | null;
  line: string;
  /**
   * The title and message with their line breaks, for an activity's body (alert-activity.ts); absent when the
   * payload carries neither or the line already says it all (one line, not clipped).
   */
  text?: string;
  /** ISO 8601: the event's `created_at` when it is a time no later than its arrival, else its arrival. */
  at: string;
}

const PICK = {
  kind: ['kind', 'alert_type', 'alertType', 'category', 'code'],
  title: ['title', 'name', 'summary'],
  message: ['message', 'description', 'detail', 'details', 'text', 'body'],
  severity: ['severity', 'level', 'priority'],
} as const;

const loose = z.record(z.string(), z.unknown());

function textOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat === '' ? null : flat;
}

function first(sources: Record<string, unknown>[], names: readonly string[]): string | null {
  for (const source of sources) {
    for (const name of names) {
      const found = textOf(source[name]);
      if (found !== null) return found;
    }
  }
  return null;
}

function clip(line: string): string {
  return line.length <= ALERT_LINE_MAX ? line : `${line.slice(0, ALERT_LINE_MAX - 1)}…`;
}

/** A code as words: `score_drop` as "score drop". */
function words(code: string): string {
  return code.replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase();
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * One line a seller reads in the CRM, such as `High alert, score drop: Score fell — the overall score dropped
 * 12 points`: the severity and the kind as words (the service's codes `high` and `score_drop` are not shown as
 * such), then the title and message. A numeric severity reads "Severity 2 alert".
 */
export function alertLine(eventType: string, data: unknown): string {
  const top = loose.safeParse(data);
  const sources: Record<string, unknown>[] = [];
  if (top.success) {
    const nested = loose.safeParse(top.data.alert);
    if (nested.success) sources.push(nested.data);
    sources.push(top.data);
  }
  const kind = first(sources, PICK.kind) ?? (top.success ? textOf(top.data.alert) : null) ?? null;
  const title = first(sources, PICK.title);
  const message = first(sources, PICK.message);
  const severity = first(sources, PICK.severity);
  const text = [title, message].filter((part) => part !== null).join(' — ');
  const head = kind ? words(kind) : '';
  const body = head && text ? `${head}: ${text}` : head || text;
  const level = severity
    ? /^\d+(\.\d+)?$/.test(severity)
      ? `Severity ${severity} alert`
      : `${capitalised(words(severity))} alert`
    : null;
  if (!body) return clip(level ? `${level} (${eventType})` : eventType);
  if (level) return clip(head ? `${level}, ${body}` : `${level}: ${body}`);
  return clip(head ? capitalised(body) : body);
}

/** The longest activity text kept: a note or Task body is for reading, not an archive of the payload. */
export const ALERT_TEXT_MAX = 4_000;

/** A string field's text with its line breaks (CRLF and CR read as LF, runs of blank lines as one). */
function multilineOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const lines = value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/g, ' ').trim());
  const text = lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return text === '' ? null : text;
}

/**
 * The alert's title and message as written, line breaks kept (the line flattens them): the body of the
 * note or Task. Plain text; each CRM's connector formats it for its own field.
 */
export function alertText(data: unknown): string | null {
  const top = loose.safeParse(data);
  if (!top.success) return null;
  const nested = loose.safeParse(top.data.alert);
  const sources = nested.success ? [nested.data, top.data] : [top.data];
  const pick = (names: readonly string[]): string | null => {
    for (const source of sources) {
      for (const name of names) {
        const found = multilineOf(source[name]);
        if (found !== null) return found;
      }
    }
    return null;
  };
  const parts = [pick(PICK.title), pick(PICK.message)].filter((part) => part !== null);
  if (parts.length === 0) return null;
  const text = parts.join('\n\n');
  return text.length <= ALERT_TEXT_MAX ? text : `${text.slice(0, ALERT_TEXT_MAX - 1)}…`;
}

/**
 * The payload's time when it is one and not later than `receivedAt`, else `receivedAt`: an alert dated in
 * the future would otherwise stand as the newest until that date and hide the real ones that follow.
 */
function isoAtMost(value: unknown, receivedAt: Date): string {
  if (typeof value === 'string') {
    const t = Date.parse(value);
    if (!Number.isNaN(t)) return new Date(Math.min(t, receivedAt.getTime())).toISOString();
  }
  return receivedAt.toISOString();
}

/** The alert in an event body; `receivedAt` stands in for a missing, unreadable or future `created_at`. */
export function alertFromEvent(
  event: { type: string; created_at?: unknown; data?: unknown },
  receivedAt: Date = new Date(),
): Alert {
  const data = loose.safeParse(event.data);
  const slug = data.success ? textOf(data.data.slug) : null;
  const line = alertLine(event.type, event.data);
  const text = alertText(event.data);
  return {
    slug: slug && slug.length <= 512 ? slug : null,
    line,
    ...(text !== null && !line.includes(text.replace(/\s+/g, ' ')) ? { text } : {}),
    at: isoAtMost(event.created_at, receivedAt),
  };
}

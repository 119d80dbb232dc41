/**
 * Alert activities (a note, a task: each provider's `activity` says which and what it needs) are off by
 * default.
 */

/** What an alert activity says, in plain text; each connector formats it for its CRM (HTML for a note). */
export interface AlertActivityInput {
  slug: string;
  /** The alert's one-line summary (alert-event.ts). */
  line: string;
  /** Its title and message with line breaks; absent on jobs queued without it, then the line stands in. */
  text?: string | undefined;
  at: string;
}

/** The longest subject every CRM takes (the shortest subject field, 255 characters). */
const SUBJECT_MAX = 255;

/** The activity of one alert: a one-line subject and a plain-text body whose line breaks are the alert's. */
export function alertActivity(input: AlertActivityInput): { subject: string; body: string; at: string } {
  return {
    subject: `Report alert: ${input.line.replace(/\s+/g, ' ')}`.slice(0, SUBJECT_MAX),
    body: `${input.text ?? input.line}\n\nReport: ${input.slug}\nFired at: ${input.at}`,
    at: input.at,
  };
}

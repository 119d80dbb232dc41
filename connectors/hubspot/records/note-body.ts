import type { RecordActivity } from '../../../src/crm/connector.js';

/**
 * A HubSpot note body is HTML, shown as such on the company's timeline: the activity's plain text (which comes
 * from report-service events, so from outside) is escaped, so a tag in it is shown as text and never rendered
 * or run, and its line breaks become `<br>`, which HubSpot keeps where it drops a bare newline.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML: the five special characters escaped, line breaks as `<br>`. */
export function htmlText(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)
    .replace(/\r\n?/g, '\n')
    .replace(/\n/g, '<br>');
}

/** The note's body: the subject in bold, a blank line, then the body. */
export function noteBody(activity: RecordActivity): string {
  return `<p><strong>${htmlText(activity.subject)}</strong></p><p>${htmlText(activity.body)}</p>`;
}

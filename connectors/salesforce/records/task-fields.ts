import type { RecordActivity } from '../../../src/crm/connector.js';

/**
 * A Salesforce Task's Subject and Description are plain text, shown as written (no markup is rendered), so
 * the activity's text needs no escaping: the Subject is one line (line breaks and tabs become spaces), the
 * Description keeps its line breaks, and both lose other control characters, which the API refuses or shows
 * as boxes.
 */

export const TASK_SUBJECT_MAX = 255;
export const TASK_DESCRIPTION_MAX = 32_000;

// Every C0 control character but tab and line feed, and DEL.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being removed
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

export function taskSubject(activity: RecordActivity): string {
  return activity.subject.replace(/\s+/g, ' ').replace(CONTROL, '').trim().slice(0, TASK_SUBJECT_MAX);
}

export function taskDescription(activity: RecordActivity): string {
  return activity.body.replace(/\r\n?/g, '\n').replace(CONTROL, '').slice(0, TASK_DESCRIPTION_MAX);
}

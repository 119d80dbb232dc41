import { describe, expect, it } from 'vitest';
import type { LocalSystem } from '../local/system.js';
import { adminRequest } from './support/admin-api.js';
import { suiteSystem } from './support/local-system.js';
import { waitFor } from './support/wait.js';

/**
 * Issue 26, point 6, end to end on each local CRM: an `alert.fired` whose title and message carry a
 * `<script>`, an `<img onerror>`, an `<a href>` and line breaks, signed and delivered by the sandbox, reaches
 * each linked record's note (HubSpot: escaped HTML, line breaks as `<br>`) or Task (Salesforce: the text as
 * written, line breaks kept).
 */

const TITLE = 'Score fell <script>alert(1)</script>';
const MESSAGE = 'First <img src=x onerror="alert(2)">\nSecond <a href="https://evil.example/">here</a>';

describe.each(['hubspot', 'salesforce'] as const)('alert activities on %s', (crm) => {
  const system = suiteSystem({ crm, companies: 30 }, { firstRunEnded: true, timeoutMs: 180_000 });

  it('carries the alert’s text escaped for the CRM, line breaks kept', async () => {
    const linked = system.recordIds.map((id) => system.crm.record(id)!).find((r) => r.status === 'matched');
    const answer = await adminRequest<{ alertActivity: boolean }>(
      system,
      `/admin/api/installations/${system.installationId}/alert-activity`,
      { json: { on: true }, bearer: true },
    );
    expect(answer.body).toEqual({ alertActivity: true });
    system.sandbox.emitEvent('alert.fired', { slug: linked!.slug!, title: TITLE, message: MESSAGE });
    if (crm === 'hubspot') {
      const [note] = await waitFor(
        'the note',
        () => {
          const notes = system.hubspot.notesFor(linked!.id);
          return notes.length > 0 ? notes : undefined;
        },
        30_000,
        100,
      );
      expect(note!.body).not.toMatch(/<(script|img|a)\b/i);
      expect(note!.body).toContain(
        'Score fell &lt;script&gt;alert(1)&lt;/script&gt;<br><br>First &lt;img src=x onerror=&quot;alert(2)&quot;&gt;<br>Second &lt;a href=&quot;https://evil.example/&quot;&gt;here&lt;/a&gt;',
      );
    } else {
      const [task] = await waitFor(
        'the Task',
        () => {
          const tasks = system.salesforce!.org.tasksFor(linked!.id);
          return tasks.length > 0 ? tasks : undefined;
        },
        30_000,
        100,
      );
      expect(task!.Description).toContain(`${TITLE}\n\n${MESSAGE}\n\nReport: ${linked!.slug}`);
      expect(task!.Subject).not.toMatch(/\n/);
    }
    // The event log says what became of it, instead of "queued" forever (issue 31).
    const records = system.recordIds.filter((id) => system.crm.record(id)?.slug === linked!.slug).length;
    const outcome = await activityOutcome(system, linked!.slug!);
    expect(outcome).toMatchObject({ state: 'created', created: records, already: 0 });
    const page = await adminRequest<string>(system, '/admin/events', { bearer: true });
    expect(page.text).toContain(`created on ${records} record${records === 1 ? '' : 's'}`);
  }, 60_000);

  it.runIf(crm === 'hubspot')(
    'shows a failed activity with the CRM’s reason (issue 31)',
    async () => {
      const linked = system.recordIds.map((id) => system.crm.record(id)!).find((r) => r.status === 'matched');
      // Every CRM call refused for good: the note cannot be made.
      system.hubspot.injectFaults({ failShare: 1, failStatus: 400 });
      try {
        system.sandbox.emitEvent('alert.fired', { slug: linked!.slug!, title: 'Refused', message: 'x' });
        const outcome = await activityOutcome(system, linked!.slug!, 'Refused', 'failed');
        expect(outcome.reason).toMatch(/400/);
        const page = await adminRequest<string>(system, '/admin/events', { bearer: true });
        expect(page.text).toMatch(/failed \([^)]*400/);
      } finally {
        system.hubspot.clearFaults();
      }
    },
    60_000,
  );
});

interface EventWithActivities {
  id: string;
  type: string;
  slug?: string | null;
  detail?: string;
  activities?: Record<string, { state: string; created: number; already: number; reason?: string }>;
}

/** The activity outcome of the newest alert for `slug` in the system's installation, once it has `state`. */
async function activityOutcome(system: LocalSystem, slug: string, title = '', state = 'created') {
  return waitFor(
    `the alert's activity outcome (${state})`,
    async () => {
      const { body } = await adminRequest<{ events: EventWithActivities[] }>(system, '/admin/api/events', {
        bearer: true,
      });
      const event = body.events.find(
        (e) => e.type === 'alert.fired' && e.slug === slug && (e.detail ?? '').includes(title),
      );
      const outcome = event?.activities?.[system.installationId];
      return outcome?.state === state ? outcome : undefined;
    },
    30_000,
    100,
  );
}

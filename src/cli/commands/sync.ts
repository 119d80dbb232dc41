import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import type { AppContext } from '../../app/context.js';
import { InstallationService, PreviewRefusedError } from '../../app/installation-service.js';
import { MATCH_STATUSES, type MatchStatus } from '../../fields.js';
import { crmLabels } from '../../providers.js';
import type { RunSummary } from '../../storage/runs.js';
import { parseCommandArgs } from '../args.js';
import { CommandFailedError } from '../errors.js';
import type { CommandIo } from '../io.js';
import { openContext } from './context.js';

/**
 * `sync [--installation ID] [--full] [--wait] [--preview]`: enqueue a backfill; with --wait, follow it to the
 * end. A sync asked for while one is under way joins it (its run id is printed, --wait follows it); a full one
 * during an incremental or reconcile run supersedes it. `--preview` matches as a full sync would (with or
 * without --full), writes nothing, waits for the result and prints it; a pending installation may be previewed
 * when named with --installation.
 */
export async function syncCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseCommandArgs('sync', argv, {
    installation: { type: 'string' },
    full: { type: 'boolean', default: false },
    wait: { type: 'boolean', default: false },
    preview: { type: 'boolean', default: false },
  });
  const ctx = await openContext(io);
  try {
    const all = await ctx.installations.list();
    const targets = values.installation
      ? all.filter((i) => i.id === values.installation)
      : all.filter((i) => i.status === 'connected');
    if (values.installation && targets.length === 0) {
      throw new CommandFailedError(
        `no installation ${values.installation}: run \`report-connector status\` to list them`,
      );
    }
    if (targets.length === 0)
      throw new CommandFailedError(`no connected installation: install the app in ${crmLabels()} first`);
    const waits = values.wait || values.preview;
    // A preview is worth nothing unqueued: check for a worker before starting anything.
    if (waits) await requireWorker(ctx);
    const runIds: string[] = [];
    const service = new InstallationService(ctx);
    for (const installation of targets) {
      if (values.preview) {
        try {
          runIds.push((await service.preview(installation.id)).runId);
        } catch (err) {
          if (err instanceof PreviewRefusedError) throw new CommandFailedError(err.message);
          throw err;
        }
        io.err(`Preview queued for ${installation.id}: nothing will be written`);
      } else {
        const start = await ctx.pipeline.requestSync(installation.id, values.full ? 'full' : 'incremental');
        runIds.push(start.runId);
        if (start.joined) io.err(`Sync already under way for ${installation.id}: joined run ${start.runId}`);
        else if (start.supersededRunId)
          io.err(
            `Full sync queued for ${installation.id} as run ${start.runId}: it supersedes run ${start.supersededRunId}`,
          );
        else io.err(`Sync queued for ${installation.id} as run ${start.runId}`);
      }
    }
    if (!waits) return 0;
    const runs = await followRuns(ctx, runIds, io);
    for (const run of runs) {
      if (values.preview) io.out(previewReport(run));
      else io.err(summaryLine(run, await ctx.index.coverage(run.installationId)));
    }
    return runs.every((r) => r.state === 'done') ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

/** How often a followed run is checked for a lost job or no progress (Pipeline.checkRun). */
const CHECK_EVERY_MS = 5_000;

/**
 * Shows a progress bar per run until each is done or stopped. Used by `sync --wait` and `demo`. A run stopped
 * because a full sync superseded it is followed into that sync: the result is the full sync's.
 */
export async function followRuns(
  ctx: AppContext,
  asked: string[],
  io: CommandIo,
  pollMs = 250,
): Promise<RunSummary[]> {
  // Position -> the run followed there now (a superseded run's place goes to the run that superseded it).
  const runIds = [...asked];
  let checkedAt = Date.now();
  const bars = new cliProgress.MultiBar(
    {
      stream: process.stderr,
      format:
        ' {installation} |{bar}| {value}/{total} records · linked {linked} · written {written} · unchanged {unchanged} · failed {failed}',
      hideCursor: true,
      noTTYOutput: !io.isTTY,
      notTTYSchedule: 2_000,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const bar = new Map(
    runIds.map((id) => [id, bars.create(1, 0, { installation: id.split('-').slice(1, 3).join('-') })]),
  );
  const final = new Map<string, RunSummary>();
  try {
    while (final.size < runIds.length) {
      const check = Date.now() - checkedAt >= CHECK_EVERY_MS;
      if (check) checkedAt = Date.now();
      for (const [at, id] of runIds.entries()) {
        if (final.has(id)) continue;
        const run = await ctx.runs.get(id);
        if (!run) throw new CommandFailedError(`run ${id} disappeared from Redis`);
        if (run.state === 'stopped' && run.supersededBy && !runIds.includes(run.supersededBy)) {
          io.err(`Run ${id} was superseded by the full sync ${run.supersededBy}: following it`);
          runIds[at] = run.supersededBy;
          bar.set(run.supersededBy, bar.get(id)!);
          continue;
        }
        if (check && (run.state === 'listing' || run.state === 'processing'))
          await ctx.pipeline.checkRun(run);
        const b = bar.get(id)!;
        b.setTotal(Math.max(1, run.recordsListed));
        b.update(run.totals.records, {
          installation: run.installationId,
          linked: run.totals.linked,
          written: run.totals.written,
          unchanged: run.totals.unchanged,
          failed: run.totals.failed,
        });
        if (run.state === 'done' || run.state === 'stopped') final.set(id, run);
      }
      if (final.size < runIds.length) await sleep(pollMs);
    }
  } finally {
    bars.stop();
  }
  return runIds.map((id) => final.get(id)!);
}

async function requireWorker(ctx: AppContext): Promise<void> {
  const workers = (await Promise.all(ctx.queues.all().map((q) => q.getWorkersCount()))).reduce(
    (a, b) => a + b,
    0,
  );
  if (workers === 0)
    throw new CommandFailedError(
      'no worker is running: start `report-connector start` or `report-connector worker`',
    );
}

/** What a write would do, as a preview found it: counts per status, then a few records of each. */
export function previewReport(run: RunSummary): string {
  const t = run.totals;
  const head =
    run.state === 'done'
      ? `Preview of ${run.installationId} (nothing was written): ${t.records} records; a write would change ${t.wouldWrite}, leave ${t.unchanged} unchanged, fail on ${t.failed}`
      : `Preview of ${run.installationId} stopped (${run.stoppedReason ?? 'unknown reason'}) after ${t.records} records`;
  const lines = [head];
  for (const status of MATCH_STATUSES) {
    const samples = run.samples.filter((s) => s.status === status);
    if (t.statuses[status] === 0 && samples.length === 0) continue;
    lines.push(`  ${status}: ${t.statuses[status]}`);
    for (const s of samples) {
      const what = s.slug ?? (s.candidates.length > 0 ? `candidates ${s.candidates.join(', ')}` : '');
      lines.push(`    ${s.recordId}  ${s.name ?? '(no name)'}${what ? `  -> ${what}` : ''}`);
    }
    // Only a few records of each status are kept as samples: say how many more there are.
    const more = t.statuses[status] - samples.length;
    if (samples.length > 0 && more > 0) lines.push(`    … and ${more} more`);
  }
  return lines.join('\n');
}

/** Why a sync leaves records as they are (the plan's `skip` and the write's refusals, pipeline/batch/). */
export const SKIPPED_MEANS =
  'left as they were: already without a report or waiting for review (only a full sync matches them again), gone from the CRM meanwhile, or already written with fresher data';

/**
 * A sync's summary: this run's counts (what it read, linked and wrote, and the statuses of the records it
 * wrote), what "skipped" means when any was, and, given the installation's counts now, every record's status
 * overall: the numbers the admin page shows.
 */
export function summaryLine(run: RunSummary, overall?: Record<MatchStatus, number>): string {
  const t = run.totals;
  const counts = (s: Record<MatchStatus, number>) =>
    `matched ${s.matched}, needs review ${s.needs_review}, no match ${s.no_match}, not published ${s.not_published}, error ${s.error}`;
  const head =
    run.state === 'done' ? 'Sync finished' : `Sync stopped (${run.stoppedReason ?? 'unknown reason'})`;
  const lines = [
    `${head} for ${run.installationId}. This run: ${t.records} records read, ${t.linked} newly linked, ${t.written} written, ${t.unchanged} unchanged, ${t.skipped} skipped, ${t.failed} failed; this run's records by status: ${counts(t.statuses)}`,
  ];
  if (t.skipped > 0) lines.push(`  skipped: ${SKIPPED_MEANS}`);
  if (overall) lines.push(`Overall, every record of ${run.installationId}: ${counts(overall)}`);
  return lines.join('\n');
}

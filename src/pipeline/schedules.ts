import { jobIdPart, type Queues } from './queues.js';

/** The sweep for stranded score-change marks runs this often whatever arrives (see scheduleScoreChangeSweep). */
export const SCORE_CHANGES_SWEEP_MS = 10_000;

/** The jobs that run by themselves on the schedule queue: change polls, the score-change sweep, reconcile. */
export class Schedules {
  constructor(private readonly queues: Queues) {}

  /** Change polling for CRMs without webhooks, every `everyMs`. */
  async schedulePoll(installationId: string, everyMs: number): Promise<void> {
    await this.queues.every(`poll-${jobIdPart(installationId)}`, everyMs, 'poll', { installationId });
  }

  /** Stops an installation's change poll (installation-stop.ts). */
  async stopPoll(installationId: string): Promise<void> {
    await this.queues.stopSchedule(`poll-${jobIdPart(installationId)}`);
  }

  /**
   * A sweep every SCORE_CHANGES_SWEEP_MS whatever arrives: marks left by an ingest that died before it queued
   * the fan-out get a fan-out even when no later event comes. It costs three Redis reads when
   * nothing is stranded (score-changes/fan-out.ts), so it runs often: 10 s since 2026-11-27 (30 s before; the
   * scheduler's upsert replaces the interval of a running deployment).
   */
  async scheduleScoreChangeSweep(): Promise<void> {
    await this.queues.every('score-changes', SCORE_CHANGES_SWEEP_MS, 'score-changes', {});
  }

  /** The reconcile sweep, every `everyMs` (RECONCILE_HOURS). */
  async scheduleReconcile(everyMs: number): Promise<void> {
    await this.queues.every('reconcile', everyMs, 'reconcile', {});
  }
}

/**
 * The pipeline's queues by name (queues.ts says what runs on each). Apart from queues.ts so that the job
 * table (jobs.ts), which names each job's queues, and the queues, which add jobs, need not import each other.
 */
export const QUEUE_NAMES = ['backfill', 'realtime', 'schedule'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

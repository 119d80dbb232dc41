/** Returned by a handler that wants to run again later without counting as a failed attempt (workers.ts). */
export class Reschedule<D = unknown> {
  constructor(
    readonly delayMs: number,
    /** The payload the job resumes with. */
    readonly data?: D,
  ) {}
}
